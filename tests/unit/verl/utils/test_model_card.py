"""verl.utils.model_card: the card's record comes from the model dir's config/weights, sft_metrics.json and
main_generation's metrics.json files, and reads back equal."""
from __future__ import annotations

import json

import pytest


@pytest.fixture()
def model_dir(tmp_path):
    from verl.utils.model_card import copy_model_dir
    from verl.utils.tiny_model import build_tiny_model

    out = tmp_path / "policy"
    copy_model_dir(build_tiny_model(), str(out))
    demos = tmp_path / "demos.json"
    demos.write_text("[]")
    (out / "sft_metrics.json").write_text(json.dumps({
        "steps": 12, "epochs": 2, "examples": 30, "assistant_tokens": 4000, "first_loss": 8.5, "final_loss": 1.25,
        "wall_s": 61.0, "train_file": str(demos), "device": "cpu",
        "config": {"data": {"train_batch_size": 16, "micro_batch_size": 8}, "optim": {"lr": 1e-3,
                   "lr_scheduler_type": "cosine"}, "trainer": {"autocast_dtype": "bfloat16"}}}))
    return out


def _generation_metrics(path, temperature: float, k: int, success: float) -> str:
    """A metrics.json in main_generation's shape (overall block, config, timing)."""
    path.write_text(json.dumps({
        "overall": {"num_items": 200, "num_trajectories": 200 * k, "k": k, "success_rate": success,
                    "success_ci95": [success - 0.05, success + 0.06], "mean_reward": 0.5,
                    "mean_reward_ci95": [0.45, 0.55], "success_pass_at": {"1": success, str(k): 0.4}},
        "config": {"rollout": {"temperature": temperature, "seed": 0, "max_tokens": 96},
                   "agentgym": {"max_rounds": 5}, "data": {"path": "AgentItemId/webshop_test.json"}},
        "timing_s": {"wall_s": 123.4}}))
    return str(path)


def test_card_records_config_training_and_evaluation_and_reads_back(model_dir, tmp_path):
    from verl.utils.model_card import build_card, read_model_card, write_model_card

    greedy = _generation_metrics(tmp_path / "greedy.json", 0.0, 1, 0.2)
    sampled = _generation_metrics(tmp_path / "sampled.json", 1.0, 4, 0.15)
    card = build_card(str(model_dir), greedy, sampled, command="bash scripts/webshop_sft.sh")
    config = json.loads((model_dir / "config.json").read_text())
    assert card["model"]["hidden_size"] == config["hidden_size"]
    assert card["model"]["vocab_size"] == config["vocab_size"]
    from transformers import AutoModelForCausalLM

    params = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(str(model_dir)).parameters())
    assert card["model"]["parameters"] == params
    assert card["training"]["steps"] == 12 and card["training"]["seconds"] == 61.0
    assert card["training"]["demonstrations_sha256"] == \
        "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"  # sha256 of "[]"
    assert card["evaluation"]["greedy"]["success_rate"] == 0.2 and card["evaluation"]["greedy"]["seconds"] == 123.4
    assert card["evaluation"]["sampled"]["temperature"] == 1.0 and card["evaluation"]["sampled"]["k"] == 4
    write_model_card(str(model_dir), card)
    assert read_model_card(str(model_dir)) == card
    text = (model_dir / "README.md").read_text()
    assert "| greedy | 200 | 1 | 20.0% | [15.0, 26.0] |" in text and "pass@4 40.0%" in text


def test_card_without_front_matter_is_refused(tmp_path):
    from verl.utils.model_card import read_model_card

    (tmp_path / "README.md").write_text("# just a title\n")
    with pytest.raises(ValueError, match="front matter"):
        read_model_card(str(tmp_path))


def test_two_stage_sft_is_recorded_stage_by_stage(model_dir, tmp_path):
    """A second SFT run started from the first one's directory: the card sums steps and time and lists both."""
    from verl.utils.model_card import build_card, copy_model_dir, write_model_card

    stage2 = tmp_path / "stage2"
    copy_model_dir(str(model_dir), str(stage2))
    first = json.loads((model_dir / "sft_metrics.json").read_text())
    (stage2 / "sft_metrics.json").write_text(json.dumps({
        **first, "steps": 20, "first_loss": 1.3, "final_loss": 0.5, "wall_s": 100.0, "model_path": str(model_dir),
        "config": {**first["config"], "optim": {"lr": 5e-4, "lr_scheduler_type": "cosine"}}}))
    training = build_card(str(stage2))["training"]
    assert [s["steps"] for s in training["stages"]] == [12, 20] and training["steps"] == 32
    assert [s["lr"] for s in training["stages"]] == [1e-3, 5e-4] and training["seconds"] == 161.0
    assert training["first_loss"] == 8.5 and training["final_loss"] == 0.5
    assert training["stages"][1]["init"] == "policy" and training["epochs"] == round((12 + 20) * 16 / 30, 2)
    write_model_card(str(stage2), build_card(str(stage2)))
    assert "stage 2: 20 steps from `policy`, lr 0.0005 cosine" in (stage2 / "README.md").read_text()
