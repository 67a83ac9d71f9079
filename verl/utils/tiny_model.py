"""A tiny, randomly initialised Qwen2-style causal LM with a locally trained ChatML tokenizer.

Used by tests, benchmarks and the CPU training profile: nothing is downloaded. The tokenizer is a
byte-level BPE trained on a built-in, deterministic corpus of WebShop-like text (instructions,
observations, ReAct thoughts/actions); the model is a seeded `Qwen2ForCausalLM` whose vocabulary
matches the tokenizer exactly. Both are written with `save_pretrained`, so
`AutoModelForCausalLM.from_pretrained(path)` / `AutoTokenizer.from_pretrained(path)` load them
offline. head_dim is 64 by default (vLLM's CPU attention rejects 16).

A task policy can get a tokenizer fitted to its data instead: `corpus` (text the BPE is trained on, e.g. the
rendered expert demonstrations) and `whole_tokens` (strings that must stay one token each, e.g. WebShop's product
ids, which a BPE splits into ~5 pieces that a small model garbles when it copies them).

CLI: `python -m verl.utils.tiny_model --out DIR [--corpus FILE] [--whole-tokens FILE] [sizes]`.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random

__all__ = ["build_tiny_model", "default_tiny_model_path", "CHATML_TEMPLATE", "SPECIAL_TOKENS"]

logger = logging.getLogger(__name__)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# Qwen-style ChatML. No default system message is injected (callers pass their own).
CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

_MARKER = "tiny_model_build.json"
_ENV_VAR = "WEBAGENT_TINY_MODEL"

_WORDS = {
    "adj": "long clear sparkly wireless waterproof organic gluten free vegan lightweight portable "
    "stainless steel non slip machine washable high quality easy to clean dairy free soft "
    "leather cotton quick release heavy duty anti fog noise cancelling rechargeable".split(),
    "noun": "speaker shoes shirt dress pants headphones charger cable case cover shampoo "
    "conditioner lotion candle pillow blanket mug bottle chair desk lamp watch necklace "
    "earrings bag backpack wallet snack cookies coffee tea protein bar socks jacket hoodie "
    "sneakers sandals boots mattress rug towel brush mirror frame keyboard mouse monitor".split(),
    "color": "black white red blue green navy grey pink beige brown purple gold silver".split(),
    "size": "small medium large x-large xx-large 6 7 8 9 10 11 12 one size 12 ounce 16 ounce "
    "2 pack 3 pack 6 count".split(),
    "brand": "acme zenith orbit nova pureleaf urbanfit lumina brightway kozy terra".split(),
}

_REACT_PROMPT = (
    "You are web shopping.\nI will give you instructions about what to do.\n"
    "You have to follow the instructions.\nEvery round I will give you an observation and a list of "
    "available actions, you have to respond an action based on the state and instruction.\n"
    "You can use search action if search is available.\nYou can click one of the buttons in clickables.\n"
    "An action should be of the following structure:\nsearch[keywords]\nclick[value]\n"
    "If the action is not valid, perform nothing.\nKeywords in search are up to you, but the value in "
    "click must be a value in the list of available actions.\nRemember that your keywords in search "
    "should be carefully designed.\nYour response should use the following format:\n\nThought:\n"
    "I think ...\n\nAction: \nclick[something]"
)


def default_tiny_model_path() -> str:
    """Where the shared tiny model lives: $WEBAGENT_TINY_MODEL or ~/.cache/webagent-rl/tiny-qwen2."""
    return os.environ.get(_ENV_VAR) or os.path.join(os.path.expanduser("~"), ".cache", "webagent-rl", "tiny-qwen2")


def _corpus(num_lines: int, seed: int) -> list[str]:
    """Deterministic WebShop-like training text for the tokenizer."""
    rng = random.Random(seed)
    w = _WORDS
    lines = [_REACT_PROMPT, "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n", "Ok.", "Invalid Action.",
             "Thank you for shopping with us! Your score (min 0.0, max 1.0)"]
    for _ in range(num_lines):
        a, n, c, s, b = (rng.choice(w["adj"]), rng.choice(w["noun"]), rng.choice(w["color"]),
                         rng.choice(w["size"]), rng.choice(w["brand"]))
        price = f"{rng.randint(5, 200)}.{rng.randint(0, 99):02d}"
        asin = "B0" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(8))
        goal = (f"i need a {a} {n}, and color: {c}, and size: {s}, "
                f"and price lower than {rng.randint(1, 20) * 10}.00 dollars")
        kind = rng.randrange(6)
        if kind == 0:
            lines.append(f"WebShop [SEP] Instruction: [SEP] {goal} [SEP] Search")
        elif kind == 1:
            lines.append(
                f"Instruction: [SEP] {goal} [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > "
                f"[SEP] {asin} [SEP] {b.title()} {a} {n} {c} [SEP] ${price}"
            )
        elif kind == 2:
            lines.append(
                f"Instruction: [SEP] {goal} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] {c} [SEP] size "
                f"[SEP] {s} [SEP] {b.title()} {a} {n} [SEP] Price: ${price} [SEP] Rating: N.A. [SEP] Description "
                f"[SEP] Features [SEP] Reviews [SEP] Buy Now"
            )
        elif kind == 3:
            lines.append(f"Thought:\nI think I should search for {a} {n}.\n\nAction:\nsearch[{a} {n} {c}]")
        elif kind == 4:
            target = rng.choice([asin.lower(), c, s, "buy now", "next >", "< prev", "back to search", "description"])
            lines.append(f"Thought:\nI think I should click on {target}.\n\nAction:\nclick[{target}]")
        else:
            lines.append(
                f"Thought:\nI think the {b} {n} matches the instruction and costs ${price}.\n\nAction:\nclick[buy now]"
            )
        role = "user" if kind < 3 else "assistant"
        lines[-1] = f"<|im_start|>{role}\n{lines[-1]}<|im_end|>\n"
    return lines


def _train_tokenizer(
    vocab_size: int, seed: int, corpus: list[str] | None = None, whole_tokens: list[str] | None = None
):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus if corpus else _corpus(6000, seed), trainer=trainer)
    if whole_tokens:
        # Ordinary (not special) added tokens: matched in raw text before the BPE, decoded as themselves.
        tok.add_tokens([AddedToken(t, single_word=False, normalized=False) for t in whole_tokens])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = CHATML_TEMPLATE
    fast.padding_side = "left"
    return fast


def _is_complete(out_dir: str, params: dict) -> bool:
    marker = os.path.join(out_dir, _MARKER)
    if not os.path.isfile(marker):
        return False
    try:
        with open(marker) as f:
            return json.load(f) == params
    except (OSError, ValueError):
        return False


def build_tiny_model(
    out_dir: str | None = None,
    vocab_size: int = 2048,
    hidden_size: int = 128,
    num_layers: int = 2,
    num_heads: int = 2,
    num_kv_heads: int = 2,
    intermediate_size: int = 256,
    max_position_embeddings: int = 8192,
    seed: int = 0,
    force: bool = False,
    corpus: list[str] | None = None,
    whole_tokens: list[str] | None = None,
) -> str:
    """Build (once) a tiny Qwen2 model + ChatML tokenizer in `out_dir` and return the path.

    Args:
        out_dir: target directory (default `default_tiny_model_path()`). An existing directory built
            with the same arguments is reused as is.
        vocab_size: BPE vocabulary size target; the model's vocabulary equals the trained tokenizer's length.
        hidden_size, num_layers, num_heads, num_kv_heads, intermediate_size, max_position_embeddings:
            Qwen2Config sizes; hidden_size / num_heads is the head dim (keep it 64 for vLLM on CPU).
        seed: seeds both the tokenizer corpus and the weight initialisation.
        force: rebuild even if a complete directory exists.
        corpus: texts to train the BPE on (None: the built-in WebShop-like corpus).
        whole_tokens: strings added to the vocabulary as single tokens (deduplicated, order kept).
    """
    if hidden_size % num_heads:
        raise ValueError(f"hidden_size={hidden_size} must be divisible by num_heads={num_heads}")
    out_dir = os.path.abspath(out_dir or default_tiny_model_path())
    params = dict(vocab_size=vocab_size, hidden_size=hidden_size, num_layers=num_layers, num_heads=num_heads,
                  num_kv_heads=num_kv_heads, intermediate_size=intermediate_size,
                  max_position_embeddings=max_position_embeddings, seed=seed, version=1)
    whole_tokens = list(dict.fromkeys(whole_tokens or []))
    if corpus or whole_tokens:  # a fitted tokenizer: the directory is reused only for the same data
        digest = hashlib.sha256("\x00".join(corpus or []).encode() + b"\x01" + "\x00".join(whole_tokens).encode())
        params["data_sha256"] = digest.hexdigest()
    if not force and _is_complete(out_dir, params):
        return out_dir

    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = _train_tokenizer(vocab_size, seed, corpus, whole_tokens)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = Qwen2ForCausalLM(config).to(torch.float32)
    finally:
        torch.random.set_rng_state(state)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id

    # Atomic: concurrent builders never see a half-written model; losing the race to a builder that
    # finished is fine.
    from verl.utils.model_utils import save_hf_dir

    save_hf_dir(out_dir, model, tokenizer, json_files={_MARKER: params},
                keep_existing=lambda path: _is_complete(path, params))
    logger.info("built tiny model (%d params, vocab %d) in %s",
                sum(p.numel() for p in model.parameters()), config.vocab_size, out_dir)
    return out_dir


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None,
                        help="output directory (default: %(default)s -> " + default_tiny_model_path() + ")")
    parser.add_argument("--vocab-size", type=int, default=2048)
    parser.add_argument("--hidden-size", type=int, default=128)
    parser.add_argument("--num-layers", type=int, default=2)
    parser.add_argument("--num-heads", type=int, default=2)
    parser.add_argument("--num-kv-heads", type=int, default=None, help="default: --num-heads")
    parser.add_argument("--intermediate-size", type=int, default=None, help="default: 2 x --hidden-size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--corpus", default=None,
                        help="train the BPE on this UTF-8 text file (one sample per line; \\n escapes newlines)")
    parser.add_argument("--whole-tokens", default=None, help="file with one string per line to keep as single tokens")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    corpus = whole = None
    if args.corpus:
        with open(args.corpus, encoding="utf-8") as fh:
            corpus = [line.rstrip("\n").replace("\\n", "\n") for line in fh if line.strip()]
    if args.whole_tokens:
        with open(args.whole_tokens, encoding="utf-8") as fh:
            whole = [line.strip() for line in fh if line.strip()]
    path = build_tiny_model(args.out, vocab_size=args.vocab_size, hidden_size=args.hidden_size,
                            num_layers=args.num_layers, num_heads=args.num_heads,
                            num_kv_heads=args.num_kv_heads or args.num_heads,
                            intermediate_size=args.intermediate_size or 2 * args.hidden_size, seed=args.seed,
                            force=args.force, corpus=corpus, whole_tokens=whole)
    print(path)


if __name__ == "__main__":
    main()
