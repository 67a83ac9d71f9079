"""LLM backends for `PromptAgent`: a prompt (chat messages or one string) in, the reply text out.

- `OpenAILLM` (`--provider openai`): any OpenAI-compatible server through the `openai` client:
  OpenAI itself, vLLM's `vllm serve` (so a checkpoint we trained and exported, served by vLLM), ...
  The endpoint and key come from `OPENAI_BASE_URL` / `OPENAI_API_KEY`; `--mode chat` uses
  `/chat/completions`, `--mode completion` uses `/completions`.
- `LocalLLM` (`--provider local`): an HF checkpoint directory (e.g. our HF export) sampled in this
  process by the project's rollout engine (`verl.workers.rollout.hf_rollout.HFEngine`), so replies
  are sampled exactly as in training; chat prompts go through the tokenizer's chat template.
  `LocalLLM` is the only code of `agentenv_webarena` that imports the trainer (`verl`), and only
  inside its methods, so the env and the benchmark CLI import without torch.

Both are thread-safe: the benchmark's workers share one backend (the HF engine batches their
requests together). Each has a `codec` that `--max_obs_length` counts tokens with: the local
model's tokenizer; for provider=openai the `--tokenizer` given, else the served model's own when
`--model` is a local HF directory (as `vllm serve DIR` names it). With no tokenizer known, a token is
taken as 4 characters (`ApproxTokenCodec`: WebArena's 1,920 tokens = 7,680 characters), logged once;
characters are never counted as if they were tokens.
"""
from __future__ import annotations

import asyncio
import logging
import os
from typing import Any, Optional, Protocol, Union

from agentenv.controller.tokens import APPROX_CHARS_PER_TOKEN, ApproxTokenCodec, HFTokenCodec, TokenCodec
from agentenv_webarena.webarena.agent.prompts.prompt_constructor import MODES

__all__ = ["LLM", "OpenAILLM", "LocalLLM", "PROVIDERS", "build_llm"]

logger = logging.getLogger(__name__)

PROVIDERS = ("openai", "local")
Prompt = Union[list[dict], str]


class LLM(Protocol):
    """What `PromptAgent` needs from a backend."""

    mode: str
    codec: TokenCodec

    def __call__(self, prompt: Prompt) -> str: ...

    def close(self) -> None: ...


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"--mode={mode!r} is not supported; choose one of {list(MODES)}")


def _codec_for(tokenizer_path: Optional[str], provider: str, model: str = "") -> TokenCodec:
    """The tokenizer `--max_obs_length` counts in: `tokenizer_path`, else the tokenizer in the `model`
    directory, else `ApproxTokenCodec` (a token taken as 4 characters; logged once per backend)."""
    if tokenizer_path:
        return HFTokenCodec.from_pretrained(tokenizer_path)
    if model and os.path.isfile(os.path.join(model, "tokenizer_config.json")):
        return HFTokenCodec.from_pretrained(model)
    logger.warning("provider=%s without --tokenizer: --max_obs_length N counts approximate tokens of %d characters "
                   "(the tree keeps N*%d characters); pass --tokenizer <HF tokenizer dir> to count the model's tokens",
                   provider, APPROX_CHARS_PER_TOKEN, APPROX_CHARS_PER_TOKEN)
    return ApproxTokenCodec()


class OpenAILLM:
    """An OpenAI-compatible endpoint.

    Args:
        model: the model name the server knows (for vLLM: the served model name or path).
        mode: "chat" or "completion".
        temperature, top_p, max_tokens: sampling settings sent with every request.
        base_url: the server's `/v1` URL; default `$OPENAI_BASE_URL`, else OpenAI's.
        api_key: default `$OPENAI_API_KEY`; a local server without auth takes any value.
        tokenizer_path: an HF tokenizer the observation cap counts with (default: the tokenizer in the
            `model` directory, else ~4 characters a token; see the module docstring).
        timeout_s: per request.
        max_retries: the client's retries on connection errors, 429 and 5xx.

    Raises:
        ValueError: no API key and no base URL (nothing to talk to).
    """

    def __init__(self, model: str, mode: str = "chat", temperature: float = 1.0, top_p: float = 0.9,
                 max_tokens: int = 384, base_url: Optional[str] = None, api_key: Optional[str] = None,
                 tokenizer_path: Optional[str] = None, timeout_s: float = 120.0, max_retries: int = 2):
        from openai import OpenAI

        _check_mode(mode)
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key:
            if base_url is None:
                raise ValueError("provider=openai needs OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (an "
                                 "OpenAI-compatible server such as `vllm serve`)")
            api_key = "EMPTY"  # local servers without auth accept any key
        self.model, self.mode = model, mode
        self.temperature, self.top_p, self.max_tokens = temperature, top_p, max_tokens
        self.client = OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=max_retries)
        self.codec = _codec_for(tokenizer_path, "openai", model)

    def __call__(self, prompt: Prompt) -> str:
        """One reply (the first choice's text; "" when the server sends none)."""
        sampling = dict(model=self.model, temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens)
        if self.mode == "chat":
            if not isinstance(prompt, list):
                raise TypeError("mode=chat needs a list of chat messages")
            response = self.client.chat.completions.create(messages=prompt, **sampling)
            return response.choices[0].message.content or ""
        if not isinstance(prompt, str):
            raise TypeError("mode=completion needs a prompt string")
        response = self.client.completions.create(prompt=prompt, **sampling)
        return response.choices[0].text or ""

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()


class LocalLLM:
    """An HF checkpoint sampled by the project's HF rollout engine, in this process.

    Args:
        model_path: HF model directory (config, weights, tokenizer).
        mode: "chat" (the tokenizer's chat template) or "completion" (the prompt as is).
        temperature, top_p, max_tokens: sampling settings (temperature 0 = greedy).
        device: "cpu", "cuda", ... (default: cuda when available).
        seed: the engine's base seed (each request gets its own generator from it).
        tokenizer_path: count --max_obs_length with another tokenizer (default: the model's).
    """

    def __init__(self, model_path: str, mode: str = "chat", temperature: float = 1.0, top_p: float = 0.9,
                 max_tokens: int = 384, device: Optional[str] = None, seed: int = 0,
                 tokenizer_path: Optional[str] = None):
        from verl.utils.model_utils import load_tokenizer
        from verl.workers.rollout.base import SamplingParams, get_engine_cls

        _check_mode(mode)
        if not os.path.isdir(model_path):
            raise ValueError(f"provider=local needs --model to be an HF checkpoint directory, got {model_path!r}")
        self.mode = mode
        self.tokenizer = load_tokenizer(model_path)
        stop = {self.tokenizer.eos_token_id}
        end_of_turn = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        if isinstance(end_of_turn, int) and end_of_turn != self.tokenizer.unk_token_id:
            stop.add(end_of_turn)
        self.sampling = SamplingParams(max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                                       stop_token_ids=tuple(sorted(i for i in stop if i is not None)))
        self.engine = get_engine_cls("hf")(model_path, None, device=device, seed=seed)
        self.codec = HFTokenCodec(load_tokenizer(tokenizer_path)) if tokenizer_path else HFTokenCodec(self.tokenizer)

    def __call__(self, prompt: Prompt) -> str:
        """One sampled reply, decoded without special tokens."""
        from verl.workers.rollout.tokenizer import encode_text, render_chat

        if self.mode == "chat":
            if not isinstance(prompt, list):
                raise TypeError("mode=chat needs a list of chat messages")
            text = render_chat(self.tokenizer, prompt, add_generation_prompt=True)
        else:
            if not isinstance(prompt, str):
                raise TypeError("mode=completion needs a prompt string")
            text = prompt
        out = asyncio.run(self.engine.generate(encode_text(self.tokenizer, text), self.sampling))
        return self.tokenizer.decode(out.token_ids, skip_special_tokens=True)

    def close(self) -> None:
        """Stop the engine's worker thread."""
        self.engine.shutdown()


def build_llm(args: Any) -> LLM:
    """The backend `args.provider` names, built from the run settings (`RunConfig`).

    Raises:
        ValueError: an unknown provider, or no model given.
    """
    if args.provider not in PROVIDERS:
        raise ValueError(f"--provider={args.provider!r} is not supported; choose one of {list(PROVIDERS)}")
    if not args.model:
        raise ValueError("--agent_type prompt needs --model (a served model name for provider=openai, an HF "
                         "checkpoint directory for provider=local)")
    sampling = dict(mode=args.mode, temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens,
                    tokenizer_path=args.tokenizer)
    if args.provider == "openai":
        return OpenAILLM(args.model, **sampling)
    return LocalLLM(args.model, **sampling)
