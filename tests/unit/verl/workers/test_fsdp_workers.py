"""ActorRolloutRefWorker / CriticWorker on CPU with the tiny Qwen2: init, log-probs, updates, engine
weight sync, checkpoint round trip and HF export."""
from __future__ import annotations

import copy
import inspect
import os

import pytest
import torch
from omegaconf import OmegaConf

from verl.config.schema import PPOConfig, default_config_path, load_config
from verl.protocol import DataProto
from verl.utils.model_utils import build_lr_scheduler
from verl.utils.tiny_model import build_tiny_model
from verl.workers.fsdp_workers import ActorRolloutRefWorker, CriticWorker
from verl.workers.rollout.base import RolloutEngine


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    return build_tiny_model(str(tmp_path_factory.mktemp("tiny") / "model"))


def dict_config(model_path: str):
    cfg = OmegaConf.load(default_config_path())
    overrides = [
        f"actor_rollout_ref.model.path={model_path}", "trainer.device=cpu", "actor_rollout_ref.rollout.name=hf",
        "actor_rollout_ref.rollout.n=2", "actor_rollout_ref.actor.ppo_mini_batch_size=2",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2", "actor_rollout_ref.actor.optim.lr=1e-3",
        "actor_rollout_ref.actor.use_kl_loss=true", "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=3",
        "data.max_prompt_length=16", "data.max_response_length=12", "data.train_batch_size=2",
        "critic.ppo_mini_batch_size=2", "critic.optim.lr=1e-3", "algorithm.adv_estimator=gae",
    ]
    return OmegaConf.merge(cfg, OmegaConf.from_dotlist(overrides))


def _typed(cfg) -> PPOConfig:
    return cfg if isinstance(cfg, PPOConfig) else load_config(cfg, resolve_auto=False)


def actor_worker(cfg, role: str) -> ActorRolloutRefWorker:
    """The actor worker as the trainer builds it: the typed sections of `cfg` (a DictConfig or a PPOConfig)."""
    typed = _typed(cfg)
    return ActorRolloutRefWorker(typed.actor_rollout_ref, role, typed.data, typed.trainer)


def critic_worker(cfg) -> CriticWorker:
    """The critic worker as the trainer builds it: the typed sections of `cfg`."""
    typed = _typed(cfg)
    return CriticWorker(typed.critic, typed.actor_rollout_ref, typed.trainer)


def _assert_cpu_checkpoint(ckpt: str) -> None:
    """Every tensor in the checkpoint files under `ckpt` (model, optimizer, extra state) lies on CPU."""
    def devices(obj):
        if hasattr(obj, "_local_tensor"):
            return {obj._local_tensor.device.type}
        if torch.is_tensor(obj):
            return {obj.device.type}
        if isinstance(obj, dict):
            return set().union(*map(devices, obj.values()))
        if isinstance(obj, (list, tuple)):
            return set().union(*map(devices, obj))
        return set()

    files = [f for f in os.listdir(ckpt) if f.endswith(".pt")]
    assert any(f.startswith("model_") for f in files), files
    for f in files:
        loaded = torch.load(os.path.join(ckpt, f), map_location="cpu", weights_only=False)
        assert devices(loaded) <= {"cpu"}, f


def make_batch(tokenizer, bs=4, P=16, R=12, seed=0) -> DataProto:
    g = torch.Generator().manual_seed(seed)
    texts = ["search for red shoes", "buy now", "click item one please", "hi"][:bs]
    prompts = torch.full((bs, P), tokenizer.pad_token_id, dtype=torch.long)
    p_mask = torch.zeros(bs, P, dtype=torch.long)
    for i, text in enumerate(texts):
        ids = tokenizer(text)["input_ids"][-P:]
        prompts[i, P - len(ids):] = torch.tensor(ids)
        p_mask[i, P - len(ids):] = 1
    responses = torch.randint(3, len(tokenizer), (bs, R), generator=g)
    response_mask = torch.zeros(bs, R, dtype=torch.long)
    response_mask[:, :4] = 1
    response_mask[:, 7:10] = 1
    attention_mask = torch.cat([p_mask, torch.ones(bs, R, dtype=torch.long)], dim=1)
    return DataProto.from_dict(tensors={
        "prompts": prompts, "responses": responses, "input_ids": torch.cat([prompts, responses], 1),
        "attention_mask": attention_mask, "position_ids": (attention_mask.cumsum(-1) - 1).clamp(min=0),
        "response_mask": response_mask,
        "advantages": torch.randn(bs, R, generator=g) * response_mask,
    }, meta_info={"global_step": 1})


def params(module):
    return {n: p.detach().clone() for n, p in module.named_parameters()}


def test_actor_rollout_ref_worker_lifecycle(tiny_path, tmp_path):
    cfg = dict_config(tiny_path)
    cfg.actor_rollout_ref.actor.checkpoint.save_contents = ["model", "optimizer", "extra", "hf_model"]
    cfg = load_config(cfg)  # the typed (frozen dataclass) config
    worker = actor_worker(cfg, role="actor_rollout_ref")
    worker.init_model()
    try:
        assert worker.engine is not None and worker.agent_loop is not None
        data = make_batch(worker.tokenizer)
        old = worker.compute_log_prob(data)
        ref = worker.compute_ref_log_prob(data)
        assert old.batch["old_log_probs"].shape == (4, 12) == old.batch["entropys"].shape
        torch.testing.assert_close(old.batch["old_log_probs"], ref.batch["ref_log_prob"])  # same initial weights
        data = data.union(old).union(ref)

        before = params(worker.module)
        out = worker.update_actor(data)
        metrics = out.meta_info["metrics"]
        for key in ("actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl", "actor/entropy", "actor/kl_loss",
                    "actor/grad_norm", "actor/lr", "timing_s/sync_weights"):
            assert key in metrics and torch.isfinite(torch.tensor(metrics[key])), key
        after = params(worker.module)
        assert any(not torch.equal(before[n], after[n]) for n in before)
        # the engine now holds the updated weights; the reference policy still holds the initial ones
        engine_params = dict(worker.engine.model.named_parameters())
        for n, p in after.items():
            torch.testing.assert_close(engine_params[n], p)
        torch.testing.assert_close(worker.compute_ref_log_prob(data).batch["ref_log_prob"], ref.batch["ref_log_prob"])
        assert not torch.allclose(worker.compute_log_prob(data).batch["old_log_probs"], old.batch["old_log_probs"])

        # checkpoint round trip: params, optimizer, scheduler and RNG come back exactly
        ckpt = str(tmp_path / "global_step_3" / "actor")
        worker.save_checkpoint(ckpt, global_step=3)
        _assert_cpu_checkpoint(ckpt)
        assert os.path.isfile(os.path.join(ckpt, "huggingface", "config.json"))
        assert any(f.endswith(".safetensors") for f in os.listdir(os.path.join(ckpt, "huggingface")))  # hf_model
        saved_params = params(worker.module)
        saved_optim = copy.deepcopy(worker.optimizer.state_dict())  # live tensors are updated in place
        saved_sched = worker.lr_scheduler.state_dict()
        rng_next = torch.rand(3)
        worker.update_actor(data)  # move everything on
        assert any(not torch.equal(saved_params[n], p) for n, p in params(worker.module).items())
        assert worker.load_checkpoint(ckpt) == 3
        for n, p in params(worker.module).items():
            assert torch.equal(saved_params[n], p), n
        loaded_optim = worker.optimizer.state_dict()
        for pid, state in saved_optim["state"].items():
            for k, v in state.items():
                assert torch.equal(torch.as_tensor(v), torch.as_tensor(loaded_optim["state"][pid][k])), (pid, k)
        assert worker.lr_scheduler.state_dict() == saved_sched
        assert torch.equal(torch.rand(3), rng_next)
        for n, p in worker.engine.model.named_parameters():  # engine re-synced after load
            assert torch.equal(p, saved_params[n])

        # HF export loads with AutoModelForCausalLM and reproduces the actor's log-probs
        from transformers import AutoModelForCausalLM, AutoTokenizer

        export = worker.export_hf(str(tmp_path / "hf"))
        model = AutoModelForCausalLM.from_pretrained(export)
        assert AutoTokenizer.from_pretrained(export).chat_template
        exported = dict(model.named_parameters())
        for n, p in saved_params.items():
            assert torch.equal(exported[n], p), n
    finally:
        worker.shutdown()


def test_ref_only_worker_and_role_errors(tiny_path, tmp_path):
    cfg = dict_config(tiny_path)
    worker = actor_worker(cfg, role="ref")
    worker.init_model()
    assert worker.actor is None and worker.engine is None
    assert all(not p.requires_grad for p in worker.ref_module.parameters())
    with pytest.raises(FileNotFoundError, match="world_size_1_rank_0"):
        worker.load_checkpoint(str(tmp_path / "missing"))
    with pytest.raises(RuntimeError, match="update_actor"):
        worker.update_actor(make_batch(worker.tokenizer))
    with pytest.raises(ValueError, match="actor_rollout_ref"):
        actor_worker(cfg, role="policy")


def test_workers_take_typed_sections_only(tiny_path):
    cfg = dict_config(tiny_path)
    typed = load_config(cfg, resolve_auto=False)
    with pytest.raises(TypeError, match=r"config=.*ActorRolloutRefConfig, got DictConfig"):
        ActorRolloutRefWorker(cfg.actor_rollout_ref, "actor", typed.data, typed.trainer)
    with pytest.raises(TypeError, match=r"trainer_config=.*TrainerConfig, got dict"):
        CriticWorker(typed.critic, typed.actor_rollout_ref, {"device": "cpu"})


def test_critic_worker(tiny_path, tmp_path):
    cfg = dict_config(tiny_path)  # plain DictConfig this time
    worker = critic_worker(cfg)
    worker.init_model()
    data = make_batch(worker.tokenizer)
    values = worker.compute_values(data).batch["values"]
    assert values.shape == (4, 12)
    assert torch.all(values[data.batch["response_mask"] == 0] == 0)
    data.batch["values"] = values
    data.batch["returns"] = torch.ones(4, 12) * data.batch["response_mask"]
    metrics = worker.update_critic(data).meta_info["metrics"]
    assert {"critic/vf_loss", "critic/grad_norm", "critic/lr"} <= set(metrics)
    worker.save_checkpoint(str(tmp_path / "critic"), global_step=1)
    saved = params(worker.module)
    worker.update_critic(data)
    assert worker.load_checkpoint(str(tmp_path / "critic")) == 1
    for n, p in params(worker.module).items():
        assert torch.equal(saved[n], p)


def test_lr_scheduler_warmup_and_cosine():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = build_lr_scheduler(opt, OmegaConf.create(
        {"lr_scheduler_type": "cosine", "warmup_steps": 2, "total_training_steps": 6, "min_lr_ratio": 0.1}))
    lrs = []
    for _ in range(7):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[:3] == pytest.approx([0.5, 1.0, 1.0])
    assert lrs[-1] == pytest.approx(0.1) and all(a >= b for a, b in zip(lrs[2:], lrs[3:], strict=False))
    with pytest.raises(ValueError, match="lr_scheduler_type"):
        build_lr_scheduler(opt, {"lr_scheduler_type": "step"})


def _fsdp_rank(rank: int, world: int, port: int, model_path: str, out: str) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    import json

    from verl.utils.model_utils import is_fsdp_module as _is_fsdp
    from verl.workers.fsdp_workers import _full_state_dict

    worker = actor_worker(dict_config(model_path), role="actor")
    worker.init_model()
    assert _is_fsdp(worker.module)
    data = make_batch(worker.tokenizer)[rank * 2:(rank + 1) * 2]  # each rank its own shard of the batch
    data = data.union(worker.compute_log_prob(data))
    data.batch["ref_log_prob"] = data.batch["old_log_probs"].clone()
    grad_norm = worker.update_actor(data).meta_info["metrics"]["actor/grad_norm"]
    # weight sync streams one all-gathered parameter at a time (both ranks iterate in the same order)
    full = _full_state_dict(worker.module, cpu_offload=False)
    streamed = worker._named_full_params()
    assert inspect.isgenerator(streamed)
    names = []
    for name, tensor in streamed:
        assert not hasattr(tensor, "full_tensor") and torch.equal(tensor, full[name]), name
        names.append(name)
    assert names == [n for n, _ in worker.module.named_parameters()]
    ckpt = os.path.join(out, "actor")
    worker.save_checkpoint(ckpt, global_step=7)
    _assert_cpu_checkpoint(ckpt)
    saved = {k: v.clone() for k, v in _full_state_dict(worker.module, cpu_offload=False).items()}
    worker.update_actor(data)
    assert worker.load_checkpoint(ckpt) == 7
    for k, v in _full_state_dict(worker.module, cpu_offload=False).items():
        assert torch.equal(v, saved[k]), k
    worker.export_hf(os.path.join(out, "hf"))
    if rank == 0:
        from transformers import AutoConfig, AutoModelForCausalLM

        assert AutoConfig.from_pretrained(os.path.join(out, "hf")).architectures == ["Qwen2ForCausalLM"]
        exported = AutoModelForCausalLM.from_pretrained(os.path.join(out, "hf")).state_dict()
        for k, v in saved.items():
            assert torch.equal(exported[k], v), k
    with open(os.path.join(out, f"rank{rank}.json"), "w") as fh:
        json.dump({"grad_norm": grad_norm}, fh)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def test_fsdp2_two_ranks_on_cpu(tiny_path, tmp_path):
    """world size 2 (gloo): sharded update with a shared gradient norm, checkpoint and export."""
    import json

    import torch.multiprocessing as mp
    from helpers import free_port

    mp.spawn(_fsdp_rank, args=(2, free_port(), tiny_path, str(tmp_path)), nprocs=2)
    norms = [json.loads((tmp_path / f"rank{r}.json").read_text())["grad_norm"] for r in range(2)]
    assert norms[0] == pytest.approx(norms[1]) and norms[0] > 0  # one norm, reduced across both shards


def test_model_override_config_applies_at_build_time(tiny_path):
    cfg = OmegaConf.merge(dict_config(tiny_path), OmegaConf.from_dotlist([
        "actor_rollout_ref.model.override_config={num_hidden_layers: 1, attention_dropout: 0.25}",
        "critic.model.override_config={num_hidden_layers: 1}"]))
    worker = actor_worker(cfg, role="ref")
    worker.init_model()
    layers = worker.ref_module.model.layers
    assert len(layers) == 1 and worker.ref_module.config.num_hidden_layers == 1  # init-time field took effect
    assert layers[0].self_attn.attention_dropout == 0.25
    critic = critic_worker(cfg)
    critic.init_model()
    assert len(critic.module.model.layers) == 1


class _RecordingEngine(RolloutEngine):
    """Engine that only records the worker's calls (isolates the worker's sleep/wake ordering)."""

    free_cache = True

    def __init__(self):
        self.log = []

    async def _generate_ids(self, prompt_ids, sampling):
        raise AssertionError("not called: the agent loop is replaced in this test")

    def update_weights(self, named_tensors):
        self.log.append(("update", len(list(named_tensors)), sorted(self._released)))

    def _release_memory(self):
        self.log.append(("release",))

    def _resume_memory(self, tags):
        self.log.append(("resume", list(tags)))


def test_free_cache_engine_sleeps_after_rollout_and_wakes_weights_then_kv_cache(tiny_path):
    cfg = dict_config(tiny_path)
    worker = actor_worker(cfg, role="actor_rollout")
    worker.init_model()
    real_engine = worker.engine
    try:
        assert real_engine.free_cache is False  # null on CPU: off
        rec = worker.engine = _RecordingEngine()

        def run(prompts):
            rec.log.append(("generate", rec.is_sleeping))
            return DataProto(meta_info={})

        worker.agent_loop.run = run
        worker.generate_sequences(DataProto(meta_info={}))
        assert rec.log == [("generate", False), ("release",)] and rec.is_sleeping
        worker.sync_weights()  # what update_actor / load_checkpoint call
        n_params = len(list(worker.module.named_parameters()))
        assert rec.log[2:] == [("resume", ["weights"]), ("update", n_params, ["kv_cache"])]
        worker.generate_sequences(DataProto(meta_info={}))
        assert rec.log[4:] == [("resume", ["kv_cache"]), ("generate", False), ("release",)]
    finally:
        worker.engine = real_engine
        worker.shutdown()


def test_deferred_sync_keeps_the_engine_on_the_previous_weights(tiny_path):
    """trainer.rollout_overlap's worker side: update_actor with meta sync_weights=False leaves the engine
    (and the version a rollout reports) on the pre-update weights until sync_weights()."""
    cfg = OmegaConf.merge(dict_config(tiny_path), OmegaConf.from_dotlist(["actor_rollout_ref.actor.use_kl_loss=false"]))
    worker = actor_worker(cfg, role="actor_rollout")
    worker.init_model()
    try:
        worker.agent_loop.run = lambda prompts: DataProto(meta_info={})  # isolate the worker from the env
        data = make_batch(worker.tokenizer)
        old = worker.compute_log_prob(data)
        assert old.meta_info["actor_weights_version"] == 0
        assert worker.generate_sequences(DataProto(meta_info={})).meta_info["rollout_weights_version"] == 0
        before = params(worker.module)
        data = data.union(old)
        data.meta_info["sync_weights"] = False
        metrics = worker.update_actor(data).meta_info["metrics"]
        assert "timing_s/sync_weights" not in metrics
        after = params(worker.module)
        assert any(not torch.equal(before[n], after[n]) for n in before)
        engine_params = dict(worker.engine.model.named_parameters())
        for n, p in before.items():  # the engine still generates with the weights from before the update
            assert torch.equal(engine_params[n].detach(), p.to(engine_params[n].dtype)), n
        assert worker.generate_sequences(DataProto(meta_info={})).meta_info["rollout_weights_version"] == 0
        assert worker.compute_log_prob(data).meta_info["actor_weights_version"] == 1
        worker.sync_weights()
        engine_params = dict(worker.engine.model.named_parameters())
        for n, p in after.items():
            torch.testing.assert_close(engine_params[n].detach(), p.to(engine_params[n].dtype))
        assert worker.generate_sequences(DataProto(meta_info={})).meta_info["rollout_weights_version"] == 1
    finally:
        worker.shutdown()


def test_free_cache_engine_true_on_cpu_fails_at_start_up(tiny_path):
    cfg = OmegaConf.merge(dict_config(tiny_path),
                          OmegaConf.from_dotlist(["actor_rollout_ref.rollout.free_cache_engine=true"]))
    worker = actor_worker(cfg, role="actor_rollout")
    with pytest.raises(ValueError, match=r"free_cache_engine=true cannot be honoured: the HF engine on cpu"):
        worker.init_model()


@pytest.mark.parametrize("dtype,expected", [("bfloat16", torch.bfloat16), ("fp32", torch.float32)])
def test_fsdp_config_model_dtype_sets_the_trained_parameters_dtype(tiny_path, dtype, expected):
    cfg = OmegaConf.merge(dict_config(tiny_path), OmegaConf.from_dotlist([
        f"actor_rollout_ref.actor.fsdp_config.model_dtype={dtype}", f"critic.fsdp_config.model_dtype={dtype}",
        "actor_rollout_ref.actor.use_kl_loss=false"]))
    actor = actor_worker(cfg, role="actor")
    actor.init_model()
    critic = critic_worker(cfg)
    critic.init_model()
    for module in (actor.module, critic.module):
        assert {p.dtype for p in module.parameters()} == {expected}
    data = make_batch(actor.tokenizer)
    data = data.union(actor.compute_log_prob(data))
    before = params(actor.module)
    metrics = actor.update_actor(data).meta_info["metrics"]
    assert torch.isfinite(torch.tensor(metrics["actor/pg_loss"]))
    assert any(not torch.equal(before[n], p) for n, p in actor.module.named_parameters())
    assert {p.dtype for p in actor.module.parameters()} == {expected}  # still after the optimizer step


def test_model_dtype_rejects_unknown_names():
    with pytest.raises(ValueError, match="model_dtype.*'int8'"):
        load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(
            ["actor_rollout_ref.actor.fsdp_config.model_dtype=int8"])), resolve_auto=False)


def test_dynamic_bsz_shuffle_and_offload_keys_reach_the_compute_cores(tiny_path):
    cfg = OmegaConf.merge(dict_config(tiny_path), OmegaConf.from_dotlist([
        "actor_rollout_ref.actor.use_dynamic_bsz=true", "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=50",
        "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=40", "critic.ppo_max_token_len_per_gpu=45",
        "actor_rollout_ref.model.enable_activation_offloading=true", "trainer.seed=11",
        "actor_rollout_ref.actor.shuffle=true", "actor_rollout_ref.actor.fsdp_config.param_offload=true"]))
    typed = load_config(cfg, resolve_auto=False)
    # verl's defaults: ref, rollout log-probs and the critic follow actor.use_dynamic_bsz
    assert typed.actor_rollout_ref.ref.log_prob_use_dynamic_bsz
    assert typed.actor_rollout_ref.rollout.log_prob_use_dynamic_bsz
    assert typed.critic.use_dynamic_bsz
    worker = actor_worker(cfg, role="actor_rollout_ref")
    worker.init_model()
    try:
        assert worker.actor.micro_batching.max_token_len == 50
        assert worker.actor.activation_offload and worker.actor.shuffle_seed == 11
        assert next(worker.module.parameters()).device.type == "cpu"  # param_offload on CPU: nothing to move
        data = make_batch(worker.tokenizer)
        lp_dyn = worker.compute_log_prob(data).batch["old_log_probs"]
        ref_dyn = worker.compute_ref_log_prob(data).batch["ref_log_prob"]
        fixed = actor_worker(dict_config(tiny_path), role="actor_rollout_ref")
        fixed.init_model()
        try:
            torch.testing.assert_close(lp_dyn, fixed.compute_log_prob(data).batch["old_log_probs"], atol=1e-5,
                                       rtol=1e-5)
            torch.testing.assert_close(ref_dyn, fixed.compute_ref_log_prob(data).batch["ref_log_prob"], atol=1e-5,
                                       rtol=1e-5)
        finally:
            fixed.shutdown()
        data = data.union(worker.compute_log_prob(data))
        data.batch["ref_log_prob"] = data.batch["old_log_probs"].clone()
        assert worker.update_actor(data).meta_info["metrics"]["actor/grad_norm"] > 0
    finally:
        worker.shutdown()
    critic = critic_worker(cfg)
    critic.init_model()
    assert critic.critic.micro_batching.max_token_len == 45 and critic.critic.shuffle_seed == 11


# ------------------------------------------------------------------------------------------------- LoRA
def lora_config(model_path: str, *extra: str) -> PPOConfig:
    """`dict_config` with a rank-4 LoRA adapter on every linear layer (typed)."""
    return load_config(OmegaConf.merge(dict_config(model_path), OmegaConf.from_dotlist([
        "actor_rollout_ref.model.lora_rank=4", "actor_rollout_ref.actor.optim.lr=1e-2", *extra])))


def test_lora_actor_ref_engine_and_adapter_checkpoint(tiny_path, tmp_path):
    """LoRA: only the adapter is optimised; the reference is the same module with the adapter disabled (no
    second copy) and stays the base model; the engine gets merged weights and scores like the actor; the
    checkpoint holds the adapter and its optimizer state only, and loads back exactly."""
    from verl.utils import lora
    from verl.utils.checkpoint import MAX_SHARD_BYTES

    worker = actor_worker(lora_config(tiny_path), role="actor_rollout_ref")
    worker.init_model()
    try:
        assert lora.is_lora(worker.module) and worker.ref_module is worker.module
        adapter = {n for n, p in worker.module.named_parameters() if p.requires_grad}
        assert adapter and all(".lora_" in n for n in adapter)
        optimised = {id(p) for group in worker.optimizer.param_groups for p in group["params"]}
        assert optimised == {id(p) for n, p in worker.module.named_parameters() if n in adapter}
        data = make_batch(worker.tokenizer)
        old, ref = worker.compute_log_prob(data), worker.compute_ref_log_prob(data)
        torch.testing.assert_close(old.batch["old_log_probs"], ref.batch["ref_log_prob"])  # B starts at 0
        data = data.union(old).union(ref)
        worker.update_actor(data)
        # the reference is still the base model, the actor has moved
        torch.testing.assert_close(worker.compute_ref_log_prob(data).batch["ref_log_prob"], ref.batch["ref_log_prob"])
        assert not torch.allclose(worker.compute_log_prob(data).batch["old_log_probs"], old.batch["old_log_probs"])
        # the engine holds the merged weights under the base names, and computes the actor's logits
        merged = {n: t.clone() for n, t in worker._named_full_params()}
        engine = dict(worker.engine.model.named_parameters())
        assert sorted(engine) == sorted(merged)
        for name, tensor in merged.items():
            torch.testing.assert_close(engine[name], tensor)
        ids = data.batch["input_ids"][:, :20]
        with torch.no_grad():
            torch.testing.assert_close(worker.engine.model(input_ids=ids).logits,
                                       worker.module(input_ids=ids).logits, rtol=1e-4, atol=1e-4)

        ckpt = str(tmp_path / "global_step_1" / "actor")
        worker.save_checkpoint(ckpt, global_step=1)
        files = {os.path.relpath(os.path.join(d, f), ckpt) for d, _, fs in os.walk(ckpt) for f in fs}
        assert {"lora_adapter/adapter_config.json", "lora_adapter/adapter_model.safetensors",
                "optim_world_size_1_rank_0.pt", "extra_state_world_size_1_rank_0.pt"} <= files
        assert not any(f.startswith("model_") or f.endswith("model.safetensors") and "lora" not in f for f in files)
        assert all(os.path.getsize(os.path.join(ckpt, f)) <= MAX_SHARD_BYTES for f in files)
        saved_adapter = {n: p.detach().clone() for n, p in worker.module.named_parameters() if n in adapter}
        saved_optim = copy.deepcopy(worker.optimizer.state_dict())
        worker.update_actor(data)
        assert worker.load_checkpoint(ckpt) == 1
        for name, param in worker.module.named_parameters():
            if name in adapter:
                assert torch.equal(param, saved_adapter[name]), name
        for pid, state in saved_optim["state"].items():
            for k, v in state.items():
                assert torch.equal(torch.as_tensor(v), torch.as_tensor(worker.optimizer.state_dict()["state"][pid][k]))
        for name, param in worker.engine.model.named_parameters():  # re-synced after the load
            torch.testing.assert_close(param, merged[name])

        # the HF export is the merged model
        from transformers import AutoConfig, AutoModelForCausalLM

        export = worker.export_hf(str(tmp_path / "hf"))
        assert AutoConfig.from_pretrained(export).architectures == ["Qwen2ForCausalLM"]
        exported = AutoModelForCausalLM.from_pretrained(export).state_dict()
        for name, tensor in merged.items():
            torch.testing.assert_close(exported[name], tensor)
    finally:
        worker.shutdown()


def test_lora_checkpoint_refuses_a_full_one_and_the_other_way(tiny_path, tmp_path):
    full = actor_worker(dict_config(tiny_path), role="actor")
    full.init_model()
    full.save_checkpoint(str(tmp_path / "full"), global_step=1)
    worker = actor_worker(lora_config(tiny_path), role="actor")
    worker.init_model()
    with pytest.raises(FileNotFoundError, match="lora_rank > 0"):
        worker.load_checkpoint(str(tmp_path / "full"))
    worker.save_checkpoint(str(tmp_path / "lora"), global_step=1)
    with pytest.raises(FileNotFoundError, match="world_size_1_rank_0"):
        full.load_checkpoint(str(tmp_path / "lora"))


def _fsdp_lora_rank(rank: int, world: int, port: int, model_path: str, out: str) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    from verl.utils import lora
    from verl.utils.model_utils import is_fsdp_module

    worker = actor_worker(lora_config(model_path), role="actor")
    worker.init_model()
    assert is_fsdp_module(worker.module) and lora.is_lora(worker.module)
    data = make_batch(worker.tokenizer)[rank * 2:(rank + 1) * 2]
    data = data.union(worker.compute_log_prob(data))
    data.batch["ref_log_prob"] = data.batch["old_log_probs"].clone()
    worker.update_actor(data)
    merged = {n: t.clone() for n, t in worker._named_full_params()}
    ckpt = os.path.join(out, "actor")
    worker.save_checkpoint(ckpt, global_step=2)
    worker.update_actor(data)
    assert worker.load_checkpoint(ckpt) == 2
    for name, tensor in worker._named_full_params():
        assert torch.equal(tensor, merged[name]), name
    worker.export_hf(os.path.join(out, "hf"))
    if rank == 0:
        from transformers import AutoModelForCausalLM

        exported = AutoModelForCausalLM.from_pretrained(os.path.join(out, "hf")).state_dict()
        for name, tensor in merged.items():
            torch.testing.assert_close(exported[name], tensor)
        assert any(not torch.equal(merged[n], t) for n, t in load_base(model_path).items())
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def load_base(model_path: str) -> dict:
    from verl.utils.model_utils import load_causal_lm

    return dict(load_causal_lm(model_path).named_parameters())


def test_fsdp2_two_ranks_lora_on_cpu(tiny_path, tmp_path):
    """world size 2 (gloo) with LoRA: sharded adapter update, merged weights gathered for the engine,
    adapter checkpoint round trip and the merged export."""
    import torch.multiprocessing as mp
    from helpers import free_port

    mp.spawn(_fsdp_lora_rank, args=(2, free_port(), tiny_path, str(tmp_path)), nprocs=2)
    assert os.path.isfile(tmp_path / "actor" / "lora_adapter" / "adapter_model.safetensors")
