"""`python -m verl.agent_trainer.main_generation` against a real WebShop server: the tiny model as a
subprocess, and a known-answer run whose engine replays expert and deliberately wrong plans, so the
success rate, Avg@k and Pass@k have exact expected values."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import read_jsonl

from verl.agent_trainer.main_generation import compute_metrics, load_categories, run_generation
from verl.utils.stats import bootstrap_mean_ci
from verl.workers.rollout.base import GenerationOutput, RolloutEngine, SamplingParams

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_IDS = os.path.join(ROOT, "AgentItemId", "webshop_test.json")


@pytest.fixture(scope="module")
def tiny_path():
    from verl.utils.tiny_model import build_tiny_model

    return build_tiny_model()


def _write_ids(path, ids):
    with open(path, "w") as fh:
        json.dump([{"item_id": i} for i in ids], fh)


def test_compute_metrics_definitions():
    recs = [{"item_id": "a", "reward": 0.5, "num_turns": 2, "env_error": ""},
            {"item_id": "a", "reward": 0.0, "num_turns": 4, "env_error": "boom"},
            {"item_id": "b", "reward": 1.0, "num_turns": 3, "env_error": ""},
            {"item_id": "b", "reward": 1.0, "num_turns": 3, "env_error": ""},
            {"item_id": "c", "reward": 0.0, "num_turns": 1, "env_error": ""},
            {"item_id": "c", "reward": 0.0, "num_turns": 1, "env_error": ""}]
    m = compute_metrics(recs)
    assert (m["num_items"], m["num_trajectories"], m["k"], m["env_errors"]) == (3, 6, 2, 1)
    assert m["mean_reward"] == pytest.approx((0.25 + 1.0 + 0.0) / 3)
    assert m["success_rate"] == pytest.approx(1 / 3)
    assert m["pass_at_k"] == pytest.approx(2 / 3)          # partial credit (0.5) passes, AgentGym-RL style
    assert m["pass_at_k_success"] == pytest.approx(1 / 3)
    assert m["mean_turns"] == pytest.approx(14 / 6)
    # pass@1 = mean of c/n = (0 + 1 + 0) / 3; pass@2 with n = 2 = share of items with a success
    assert m["success_pass_at"] == {"1": pytest.approx(1 / 3), "2": pytest.approx(1 / 3)}
    # Wilson over 3 items with success shares (0, 1, 0): p = 1/3, n = 3, z = 1.959964
    # denom = 1 + z^2/3 = 2.2804863, centre = (1/3 + z^2/6) / denom = 0.9735764 / 2.2804863 = 0.4269162
    # half = z/denom * sqrt((1/3)(2/3)/3 + z^2/36) = 0.8594497 * sqrt(0.1807813) = 0.3654243 -> [0.0614919, 0.7923404]
    assert m["success_ci95"] == [pytest.approx(0.0614919, abs=1e-6), pytest.approx(0.7923404, abs=1e-6)]
    lo, hi = m["mean_reward_ci95"]
    assert 0.0 <= lo <= m["mean_reward"] <= hi <= 1.0  # item means are 0.25, 1.0, 0.0


def test_load_categories_directory(tmp_path):
    _write_ids(tmp_path / "webshop_a.json", ["webshop_1", "webshop_2", "webshop_3"])
    _write_ids(tmp_path / "webshop_b.json", ["webshop_3"])
    _write_ids(tmp_path / "webarena_x.json", ["webarena_1"])
    cats = load_categories(str(tmp_path), "webshop", max_items=2)
    assert cats == {"webshop_a": ["webshop_1", "webshop_2"], "webshop_b": ["webshop_3"]}
    with pytest.raises(ValueError, match="webarena_1"):
        load_categories(str(tmp_path / "webarena_x.json"), "webshop")
    with pytest.raises(FileNotFoundError, match="webtext_"):
        load_categories(str(tmp_path), "webtext")


def test_tiny_model_subprocess(webshop_url, tiny_path, tmp_path):
    ids = ["webshop_50", "webshop_77", "webshop_80"]
    _write_ids(tmp_path / "items.json", ids)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "verl.agent_trainer.main_generation", f"model.path={tiny_path}",
           f"data.path={tmp_path / 'items.json'}", "data.n_samples=2", "data.batch_size=2",
           f"data.output_path={out}", f"agentgym.env_addr={webshop_url}", "agentgym.max_rounds=2",
           "rollout.max_tokens=16", "rollout.max_model_len=4096", "data.max_prompt_length=1024",
           "data.max_response_length=1024", "trainer.device=cpu", f"hydra.run.dir={tmp_path / 'hydra'}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Pass@k" in proc.stdout and "items" in proc.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    overall = metrics["overall"]
    assert (overall["num_items"], overall["num_trajectories"], overall["k"]) == (3, 6, 2)
    assert 0.0 <= overall["mean_reward"] <= overall["pass_at_k"] <= 1.0
    assert overall["success_rate"] <= overall["pass_at_k_success"] <= overall["pass_at_k"]
    assert overall["env_errors"] == 0 and 1 <= overall["mean_turns"] <= 2
    assert list(metrics["categories"]) == ["items"] and metrics["categories"]["items"] == overall
    trajs = read_jsonl(out / "trajectories.jsonl")
    assert sorted((t["item_id"], t["sample"]) for t in trajs) == sorted((i, s) for i in ids for s in range(2))
    assert all(t["categories"] == ["items"] and t["messages"][0]["role"] == "system" for t in trajs)
    assert compute_metrics(trajs) == overall  # the file agrees with the trajectories it summarizes

    bad = subprocess.run(cmd[:3] + ["data.n_sample=2"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode != 0 and "data.n_samples" in bad.stderr


# ------------------------------------------------------------------------------ known answers
class ReplayEngine(RolloutEngine):
    """Plays precomputed action lists: per item, the first trajectory to start gets plan "good", the
    second plan "bad". The plan name is written into the Thought, so later turns find it in the prompt."""

    def __init__(self, tokenizer, plans: dict[str, dict[str, list[str]]]):
        self.tok, self.plans, self.started = tokenizer, plans, {}

    async def _generate_ids(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        text = self.tok.decode(prompt_ids)
        instr = [i for i in self.plans if i in text]
        assert len(instr) == 1, "the prompt should name exactly one known instruction"
        turn = text.count("<|im_start|>assistant") - 2  # "Ok." turn + generation header
        if turn == 0:
            name = ("good", "bad")[self.started.get(instr[0], 0)]
            self.started[instr[0]] = self.started.get(instr[0], 0) + 1
        else:
            name = "good" if "plan good" in text else "bad"
        action = self.plans[instr[0]][name][turn]
        ids = self.tok.encode(f"Thought:\nplan {name}\n\nAction:\n{action}", add_special_tokens=False)
        ids.append(self.tok.eos_token_id)
        return GenerationOutput(token_ids=ids, log_probs=[0.0] * len(ids), finish_reason="stop")

    def update_weights(self, named_tensors) -> None:
        pass


def _plans(url, n_items=3):
    """Expert plans that succeed and "buy the first hit" plans that do not, with their true rewards
    (the latter measured by playing them on the server)."""
    from agentenv_webshop.engine.catalog import load_catalog
    from agentenv_webshop.engine.goal import build_goals
    from agentenv_webshop.expert import ClientEnv, ExpertPolicy, candidate_queries

    goals = build_goals(load_catalog().products)
    env = ClientEnv(url)
    chosen = {}
    try:
        for entry in json.load(open(TEST_IDS))[:80]:
            idx = int(entry["item_id"].rsplit("_", 1)[1])
            goal = goals[idx]
            episode = ExpertPolicy().play(env, idx, goal)
            if not episode.success or len(episode.actions) > 8:
                continue
            env.reset(idx)
            query = candidate_queries(goal)[0]
            env.step(f"search[{query}]")
            first = next(c for c in env.clickables() if c not in ("back to search", "next >", "< prev"))
            bad = [f"search[{query}]", f"click[{first}]", "click[buy now]"]
            env.step(bad[1])
            _, bad_reward, done = env.step(bad[2])
            if not done or bad_reward == 1.0:
                continue
            chosen[entry["item_id"]] = {"instr": goal["instruction_text"], "good": episode.actions, "bad": bad,
                                        "bad_reward": bad_reward}
            if len(chosen) == n_items:
                break
    finally:
        env.close()
    assert len(chosen) == n_items, "the expert should solve a few test items"
    assert len({c["instr"] for c in chosen.values()}) == n_items
    return chosen


def test_known_answer_expert_replay(webshop_url, tiny_path, tmp_path):
    from transformers import AutoTokenizer

    chosen = _plans(webshop_url)
    items = list(chosen)
    _write_ids(tmp_path / "webshop_a.json", items[:2])
    _write_ids(tmp_path / "webshop_b.json", items[1:])   # items[1] sits in both categories
    tok = AutoTokenizer.from_pretrained(tiny_path)
    engine = ReplayEngine(tok, {c["instr"]: {"good": c["good"], "bad": c["bad"]} for c in chosen.values()})
    cfg = {"model": {"path": tiny_path}, "trainer": {"device": "cpu"},
           "data": {"path": str(tmp_path), "n_samples": 2, "batch_size": 2, "output_path": str(tmp_path / "out"),
                    "max_prompt_length": 1024, "max_response_length": 2048},
           "rollout": {"name": "hf", "max_tokens": 64, "max_model_len": 4096, "temperature": 0.0},
           "agentgym": {"env_addr": webshop_url, "max_rounds": 10, "timeout": 30}}
    result = run_generation(cfg, engine=engine)

    # Wilson with every item's success share 0.5 (p = 0.5): overall n = 3 items, each category n = 2
    # n = 3: denom = 1 + z^2/3 = 2.2804863, half = z/denom * sqrt(0.25/3 + z^2/36) = 0.8594497 * 0.4359363
    #        = 0.3746655 -> [0.1253345, 0.8746655];  n = 2: [0.0945312, 0.9054688] (see test_stats)
    wilson = {3: [pytest.approx(0.1253345, abs=1e-6), pytest.approx(0.8746655, abs=1e-6)],
              2: [pytest.approx(0.0945312, abs=1e-6), pytest.approx(0.9054688, abs=1e-6)]}

    def expected(ids):
        item_means = [(1.0 + chosen[i]["bad_reward"]) / 2 for i in ids]
        return {
            "num_items": len(ids), "num_trajectories": 2 * len(ids), "k": 2, "env_errors": 0,
            "mean_reward": pytest.approx(sum(item_means) / len(ids)),
            "mean_reward_ci95": pytest.approx(list(bootstrap_mean_ci(item_means, seed=0))),
            "success_rate": pytest.approx(0.5), "success_ci95": wilson[len(ids)],
            "pass_at_k_success": 1.0, "pass_at_k": 1.0,
            "success_pass_at": {"1": pytest.approx(0.5), "2": 1.0},  # 1 success in 2 samples: c/n, then 1
            "mean_turns": pytest.approx(sum(len(chosen[i]["good"]) + 3 for i in ids) / (2 * len(ids))),
        }

    assert result["overall"] == expected(items)
    assert result["categories"] == {"webshop_a": expected(items[:2]), "webshop_b": expected(items[1:])}
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["overall"] == result["overall"]
    trajs = read_jsonl(tmp_path / "out" / "trajectories.jsonl")
    assert len(trajs) == 6  # the shared item is rolled out once, counted in both categories
    for t in trajs:
        c = chosen[t["item_id"]]
        good = "plan good" in t["messages"][4]["content"]
        assert t["reward"] == (1.0 if good else c["bad_reward"]) and t["success"] == good
        assert t["num_turns"] == len(c["good"] if good else c["bad"])
    assert [t["categories"] for t in trajs if t["item_id"] == items[1]] == [["webshop_a", "webshop_b"]] * 2


def test_greedy_ci_known_answer(webshop_url, tiny_path, tmp_path):
    """One greedy sample per item: 3 of 10 items play the expert's plan (reward 1), 7 buy the first
    hit (rewards measured on the server), so success and its Wilson CI are known by hand."""
    from transformers import AutoTokenizer

    chosen = _plans(webshop_url, n_items=10)
    items = list(chosen)
    winners = set(items[:3])
    # k = 1: each item's only trajectory plays plan "good"; for 7 items "good" is the losing plan.
    plans = {c["instr"]: {"good": c["good"] if i in winners else c["bad"], "bad": c["bad"]} for i, c in chosen.items()}
    _write_ids(tmp_path / "webshop_test.json", items)
    tok = AutoTokenizer.from_pretrained(tiny_path)
    cfg = {"model": {"path": tiny_path}, "trainer": {"device": "cpu"},
           "data": {"path": str(tmp_path / "webshop_test.json"), "n_samples": 1, "batch_size": 10,
                    "output_path": str(tmp_path / "out"), "max_prompt_length": 1024, "max_response_length": 2048},
           "rollout": {"name": "hf", "max_tokens": 64, "max_model_len": 4096, "temperature": 0.0, "seed": 7},
           "agentgym": {"env_addr": webshop_url, "max_rounds": 10, "timeout": 30}}
    overall = run_generation(cfg, engine=ReplayEngine(tok, plans))["overall"]

    rewards = [1.0 if i in winners else chosen[i]["bad_reward"] for i in items]
    assert overall["success_rate"] == pytest.approx(0.3)
    # Wilson 3/10 at 95% (worked out in tests/unit/verl/utils/test_stats.py): [0.1077913, 0.6032219]
    assert overall["success_ci95"] == [pytest.approx(0.1077913, abs=1e-6), pytest.approx(0.6032219, abs=1e-6)]
    assert overall["mean_reward"] == pytest.approx(sum(rewards) / 10)
    # bootstrap over the 10 item rewards, seeded with rollout.seed
    assert overall["mean_reward_ci95"] == pytest.approx(list(bootstrap_mean_ci(rewards, seed=7)))
    assert overall["mean_reward_ci95"] != pytest.approx(list(bootstrap_mean_ci(rewards, seed=0)))
    assert overall["success_pass_at"] == {"1": pytest.approx(0.3)}
    saved = json.loads((tmp_path / "out" / "metrics.json").read_text())["overall"]
    assert saved["success_ci95"] == overall["success_ci95"] and saved["mean_reward_ci95"] == overall["mean_reward_ci95"]
