"""Hydra entry point of the PPO/GRPO trainer.

    python -m verl.agent_trainer.main_ppo data.train_file=AgentItemId/webshop_train.json \
        actor_rollout_ref.model.path=<hf dir> algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=4 ...

Config: `verl/agent_trainer/config/ppo_trainer.yaml` (AgentGym-RL's and verl's key names). Unknown
keys fail before anything starts, naming the key and its closest valid spellings. With
`trainer.learning_report=True` the before/after table of `learning_report.json` is printed at the end.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any

import hydra

from verl.config.schema import PPOConfig, console_entry, load_config

__all__ = ["main", "run_ppo", "init_ray"]

logger = logging.getLogger(__name__)


def init_ray(config: PPOConfig) -> None:
    """Start a local Ray runtime sized for this host, or join the cluster at `ray_init.address`
    (started with `ray start --head` / `ray start --address`); no-op when Ray is already up.

    Local runtime: small object store and no dashboard (the defaults reserve ~7.5 GB of /dev/shm
    and start ~10 dashboard processes). Worker actors use fractional CPUs (`ray_init.worker_num_cpus`).
    A cluster's resources were set by `ray start`, so only the runtime env is passed when joining.
    """
    import ray

    if ray.is_initialized():
        return
    rcfg = config.ray_init
    env = {k: v for k, v in os.environ.items()
           if k.startswith(("HF_", "TRANSFORMERS_", "TOKENIZERS_", "WANDB_", "VLLM_", "CUDA_", "PYTORCH_"))}
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    if rcfg.address is not None:
        ray.init(address=rcfg.address, runtime_env={"env_vars": env}, logging_level=logging.WARNING)
        return
    ray.init(num_cpus=rcfg.num_cpus, object_store_memory=rcfg.object_store_memory,
             include_dashboard=rcfg.include_dashboard, runtime_env={"env_vars": env},
             logging_level=logging.WARNING)


def run_ppo(cfg: PPOConfig | Any) -> dict:
    """Start Ray, build the trainer and train.

    Args:
        cfg: the typed `PPOConfig`, or a DictConfig / dict validated into one here (`load_config`).

    Returns:
        The last step's metrics.
    """
    import ray

    from verl.agent_trainer.ppo.ray_trainer import RayPPOTrainer, check_config

    config = cfg if isinstance(cfg, PPOConfig) else load_config(cfg)
    check_config(config)  # what needs the estimator registry, before Ray starts
    logger.info("device=%s rollout engine=%s estimator=%s", config.trainer.device,
                config.actor_rollout_ref.rollout.name, config.algorithm.adv_estimator)
    init_ray(config)
    trainer = RayPPOTrainer(config)
    try:
        trainer.init_workers()
        return trainer.fit()
    finally:
        trainer.shutdown()
        if config.ray_init.timeline_json_file:
            ray.timeline(filename=config.ray_init.timeline_json_file)


@hydra.main(config_path="config", config_name="ppo_trainer", version_base=None)
def _hydra_main(cfg) -> None:
    config = load_config(cfg)
    started = time.time()
    run_ppo(config)
    if config.trainer.learning_report:
        from verl.agent_trainer.learning_report import REPORT_FILE, format_table, load_report

        path = os.path.join(config.trainer.default_local_dir, REPORT_FILE)
        if not os.path.isfile(path) or os.path.getmtime(path) < started:  # stopped by trainer.time_budget_s
            print(f"learning report: not written by this run (it stopped before the last step; rerun to resume): "
                  f"{path}")
            return
        print(format_table(load_report(path)))
        print(f"learning report: {path}")


main = console_entry(PPOConfig, _hydra_main)


if __name__ == "__main__":
    main()
