"""RewardModelWorker on CPU with a tiny Qwen2ForSequenceClassification: each trajectory's score is the
HF model's own score of that trajectory alone, placed on its last model token; FSDP (two gloo ranks)
gives the same scores; wrong checkpoints are refused by name."""
from __future__ import annotations

import os

import pytest
import torch
from helpers import build_tiny_reward_model, free_port

from verl.config.schema import ModelConfig, RewardModelConfig, RewardModelModelConfig, TrainerConfig
from verl.protocol import DataProto
from verl.utils.tiny_model import build_tiny_model
from verl.workers.fsdp_workers import RewardModelWorker

P, R = 12, 10


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("rm")
    policy = build_tiny_model(str(root / "policy"))
    return policy, build_tiny_reward_model(policy, str(root / "rm"))


def rm_config(path: str, micro: int = 3) -> RewardModelConfig:
    return RewardModelConfig(enable=True, micro_batch_size_per_gpu=micro, model=RewardModelModelConfig(path=path))


def rm_worker(config: RewardModelConfig, policy: str) -> RewardModelWorker:
    """A CPU reward-model worker sharing the tokenizer of the policy at `policy`."""
    return RewardModelWorker(config, ModelConfig(path=policy), TrainerConfig(device="cpu"))


def make_batch(tokenizer) -> tuple[DataProto, list[torch.Tensor]]:
    """4 rows: left-padded prompts, right-padded responses of different lengths (model tokens and an
    observation), one row whose response has no model token. Also returns each row's real tokens."""
    g = torch.Generator().manual_seed(0)
    prompts_text = ["search for red shoes", "buy now", "click item one please", "hi"]
    lengths, model_spans = [10, 6, 8, 3], [[(0, 4), (7, 9)], [(0, 6)], [(0, 3), (5, 6)], []]
    bs = len(prompts_text)
    prompts = torch.full((bs, P), tokenizer.pad_token_id, dtype=torch.long)
    responses = torch.full((bs, R), tokenizer.pad_token_id, dtype=torch.long)
    attention = torch.zeros(bs, P + R, dtype=torch.long)
    response_mask = torch.zeros(bs, R, dtype=torch.long)
    real = []
    for i, text in enumerate(prompts_text):
        ids = tokenizer(text)["input_ids"][-P:]
        prompts[i, P - len(ids):] = torch.tensor(ids)
        attention[i, P - len(ids):P] = 1
        responses[i, :lengths[i]] = torch.randint(3, len(tokenizer), (lengths[i],), generator=g)
        attention[i, P:P + lengths[i]] = 1
        for a, b in model_spans[i]:
            response_mask[i, a:b] = 1
        real.append(torch.cat([torch.tensor(ids), responses[i, :lengths[i]]]))
    responses[0, lengths[0] - 1] = tokenizer.pad_token_id  # a real token equal to the pad id (pad = eos tokenizers)
    real[0][-1] = tokenizer.pad_token_id
    data = DataProto.from_dict(tensors={
        "prompts": prompts, "responses": responses, "input_ids": torch.cat([prompts, responses], 1),
        "attention_mask": attention, "position_ids": (attention.cumsum(-1) - 1).clamp(min=0),
        "response_mask": response_mask})
    return data, real


def expected_scores(rm_path: str, real: list[torch.Tensor]) -> list[float]:
    """The HF model's own pooled score of each trajectory alone (no padding at all)."""
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(rm_path).eval()
    model.config.pad_token_id = None  # one unpadded row: HF pools its last token
    with torch.no_grad():
        return [float(model(input_ids=ids[None]).logits[0, 0]) for ids in real]


def test_scores_sit_on_the_last_model_token_and_match_hf(paths):
    policy, rm = paths
    worker = rm_worker(rm_config(rm), policy)
    worker.init_model()
    data, real = make_batch(worker.tokenizer)
    scores = worker.compute_rm_score(data).batch["rm_scores"]
    assert scores.shape == (4, R) and scores.dtype == torch.float32
    want = expected_scores(rm, real)
    for i, last in enumerate([8, 5, 5]):
        assert torch.count_nonzero(scores[i]) == 1
        assert scores[i, last].item() == pytest.approx(want[i], abs=1e-4)
    assert torch.count_nonzero(scores[3]) == 0  # no model token: nowhere to put a reward
    assert len(set(round(w, 4) for w in want[:3])) == 3  # the scores tell trajectories apart
    # micro-batches change nothing
    one = rm_worker(rm_config(rm, micro=1), policy)
    one.init_model()
    assert torch.allclose(one.compute_rm_score(data).batch["rm_scores"], scores, atol=1e-5)
    assert not any(p.requires_grad for p in worker.module.parameters())


def test_the_trainer_config_sections_are_read(paths):
    from omegaconf import OmegaConf

    from verl.config.schema import default_config_path, load_config

    policy, rm = paths
    cfg = OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist([
        f"actor_rollout_ref.model.path={policy}", "trainer.device=cpu", "reward_model.enable=true",
        f"reward_model.model.path={rm}", "reward_model.micro_batch_size_per_gpu=2"]))
    cfg = load_config(cfg, resolve_auto=False)
    worker = RewardModelWorker(cfg.reward_model, cfg.actor_rollout_ref.model, cfg.trainer)  # as the trainer does
    assert worker.config.micro_batch_size_per_gpu == 2 and worker._tokenizer_path == policy


def test_a_causal_lm_is_refused(paths):
    policy, _ = paths
    worker = rm_worker(rm_config(policy), policy)
    with pytest.raises(ValueError, match="num_labels=2"):
        worker.init_model()


def test_a_reward_model_with_another_tokenizer_is_refused(paths, tmp_path):
    from transformers import AutoTokenizer

    policy, rm = paths
    other = build_tiny_reward_model(policy, str(tmp_path / "other"))
    tok = AutoTokenizer.from_pretrained(other)
    tok.add_tokens(["<not-in-the-policy>"])
    tok.save_pretrained(other)
    worker = rm_worker(rm_config(other), policy)
    with pytest.raises(ValueError, match="tokenizer"):
        worker.init_model()


def _fsdp_rank(rank: int, world: int, port: int, policy: str, rm: str, out: str) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    from verl.utils.model_utils import is_fsdp_module as _is_fsdp

    worker = rm_worker(rm_config(rm, micro=1), policy)
    worker.init_model()
    assert _is_fsdp(worker.module)
    data, _ = make_batch(worker.tokenizer)
    torch.save(worker.compute_rm_score(data[rank * 2:(rank + 1) * 2]).batch["rm_scores"],
               os.path.join(out, f"rank{rank}.pt"))
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def test_fsdp_two_ranks_give_the_same_scores(paths, tmp_path):
    import torch.multiprocessing as mp

    policy, rm = paths
    mp.spawn(_fsdp_rank, args=(2, free_port(), policy, rm, str(tmp_path)), nprocs=2)
    sharded = torch.cat([torch.load(tmp_path / f"rank{r}.pt") for r in range(2)])
    plain = rm_worker(rm_config(rm), policy)
    plain.init_model()
    data, _ = make_batch(plain.tokenizer)
    assert torch.allclose(sharded, plain.compute_rm_score(data).batch["rm_scores"], atol=1e-5)
