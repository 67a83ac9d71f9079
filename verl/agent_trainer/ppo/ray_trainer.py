"""The single-controller PPO/GRPO loop: `RayPPOTrainer.fit()` drives Ray worker groups through one
training step per batch of item ids.

Owns the order of the stages, their timers, validation, checkpoint/resume and logging. It does not
own the maths (`core_algos`: estimators, KL), the model code (`workers/`), or the agent loop
(`workers/rollout/`): each stage is a helper that sends a DataProto to a worker group or a
registered function and `union`s the answer into the batch.

Worker groups (verl's names; classes from `verl.workers.fsdp_workers`):
  actor_rollout -> ActorRolloutRefWorker(role="actor_rollout", or "actor_rollout_ref" when a KL term is
                   on: the reference policy then lives in the same process): generate_sequences,
                   compute_log_prob, compute_ref_log_prob, update_actor, save/load_checkpoint, export_hf
  critic        -> CriticWorker: compute_values, update_critic, save/load_checkpoint (when values are needed)
  reward_model  -> RewardModelWorker: compute_rm_score (when reward_model.enable; frozen, never checkpointed)
On GPU a group has `nnodes * n_gpus_per_node` ranks sharing the GPUs (fractional `num_gpus`); on
CPU it has one rank per node (`nnodes` ranks, gloo). Ranks are placed by per-node placement groups
(`verl.utils.ray_placement`): rank r of every group lands on node r // ranks-per-node, in bundle r
(one node on CPU needs none: the group is one actor). Actors take a fractional `num_cpus`;
data-parallel calls split the batch across ranks. With `agentgym.env_servers.num > 0` the trainer
first launches the env fleet (`verl.utils.agentgym.fleet`) and rolls out against its servers.

With `trainer.rollout_overlap` (one-step off-policy) the actor workers get a second Ray concurrency
group and step k+1's rollout runs beside step k's update (`rollout_overlap.RolloutOverlap`).
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
import uuid
from typing import Any, Callable, Iterator

import numpy as np
import torch

from agentenv.controller.types import is_success
from verl.agent_trainer.expert_probe import load_demos, per_goal_log_likelihood, probe_batch
from verl.agent_trainer.learning_report import (
    draw_report_figure,
    keep_before,
    load_kept_before,
    write_training_report,
)
from verl.agent_trainer.ppo import core_algos, metric_utils
from verl.agent_trainer.ppo.dynamic_sampling import GroupFilter
from verl.agent_trainer.ppo.metric_utils import timer
from verl.agent_trainer.ppo.rollout_overlap import RolloutOverlap, check_overlap_supported
from verl.agent_trainer.ppo.worker_group import DPCall, WorkerGroup
from verl.config.device import check_attn_implementation, resolve_device
from verl.config.schema import PPOConfig, to_dict
from verl.protocol import DataProto
from verl.utils.agentgym.servers import env_server_metrics
from verl.utils.checkpoint import CheckpointManager
from verl.utils.dataset import AgentDataset, StatefulDataLoader, rows_to_dataproto
from verl.utils.plots import plot_run
from verl.utils.ray_placement import NodePlacement, node_placement
from verl.utils.tracking import Tracking
from verl.workers.rollout.agent_loop import check_env_failures

__all__ = ["RayPPOTrainer", "check_config", "use_critic"]

logger = logging.getLogger(__name__)


def check_batch_divides_ranks(cfg: PPOConfig, world: int) -> None:
    """Refuse a training batch the ranks cannot share exactly.

    The update splits the batch's train_batch_size x rollout.n trajectories over the ranks; a
    remainder would be padded with copies of real rows, trained twice. Fails before any worker starts,
    naming the numbers to change.
    """
    rows = cfg.data.train_batch_size * cfg.actor_rollout_ref.rollout.n
    if world > 1 and rows % world:
        fits = [b for b in range(1, 4 * cfg.data.train_batch_size + 1)
                if b * cfg.actor_rollout_ref.rollout.n % world == 0][:3]
        raise ValueError(
            f"data.train_batch_size={cfg.data.train_batch_size} x actor_rollout_ref.rollout.n="
            f"{cfg.actor_rollout_ref.rollout.n} = {rows} trajectories per step cannot be split evenly over "
            f"{world} ranks (trainer.nnodes x trainer.n_gpus_per_node); choose a train_batch_size such as "
            f"{fits} or a rollout.n that makes the product a multiple of {world}")


def use_critic(cfg: PPOConfig) -> bool:
    """Whether a critic is trained: `critic.enable` when set, else whether the estimator's registry
    entry says it needs values (`core_algos.estimator_info(...).needs_critic`)."""
    if cfg.critic.enable is not None:
        return bool(cfg.critic.enable)
    return core_algos.estimator_info(cfg.algorithm.adv_estimator).needs_critic


def check_config(cfg: PPOConfig) -> None:
    """Start-up checks that need the estimator registry (the config package does not import it).

    Raises:
        ValueError: an unregistered estimator (listing the choices), one needing inputs this trainer
            cannot produce, a group estimator with `rollout.n=1`, a critic-based one with
            `critic.enable=false`, or a trained critic whose mini-batch or attention kernel cannot work.
    """
    algo, n = cfg.algorithm, cfg.actor_rollout_ref.rollout.n
    info = core_algos.estimator_info(algo.adv_estimator)
    unmet = info.needs - RayPPOTrainer._ESTIMATOR_NEEDS.keys()
    if unmet:
        raise ValueError(f"algorithm.adv_estimator={algo.adv_estimator} needs {sorted(unmet)}, which this trainer "
                         f"cannot produce (it produces {sorted(RayPPOTrainer._ESTIMATOR_NEEDS)})")
    if info.needs_groups and n < 2:
        no_groups = sorted(k for k in core_algos.ADV_ESTIMATOR_REGISTRY
                           if not core_algos.estimator_info(k).needs_groups)
        raise ValueError(
            f"algorithm.adv_estimator={algo.adv_estimator} compares the samples of one prompt, but "
            f"actor_rollout_ref.rollout.n={n} gives each prompt a single sample (no baseline); set "
            f"rollout.n >= 2 or use an estimator without groups ({', '.join(no_groups)})")
    if info.needs_critic and cfg.critic.enable is False:
        raise ValueError(f"algorithm.adv_estimator={algo.adv_estimator} needs values from a critic, but "
                         "critic.enable=false; set critic.enable=true (or null), or use an estimator without one")
    if not use_critic(cfg):
        return
    if cfg.data.train_batch_size % cfg.critic.ppo_mini_batch_size:
        raise ValueError(
            f"data.train_batch_size={cfg.data.train_batch_size} must be divisible by "
            f"critic.ppo_mini_batch_size={cfg.critic.ppo_mini_batch_size} (or lower critic.ppo_mini_batch_size)")
    attn = cfg.critic.model.attn_implementation
    if attn == "flash_attention_2":  # eager and sdpa run anywhere: no device to resolve
        check_attn_implementation("critic.model.attn_implementation", attn, resolve_device(cfg.trainer.device))


def _goal_sets(config: PPOConfig, train_dataset: AgentDataset) -> dict[str, AgentDataset]:
    """The goal sets of the training pool the learning report evaluates beside the held-out goals: {"trained",
    "control"} from `data.trained_val_file` / `data.control_val_file`, the first `data.val_max_items` of each.
    Empty without the report (a profile may name files for a report the command line turns off: they are then not
    read, and an info line says so). A control set that shares goals with the training data or the trained set is
    no control: it is left out, with a warning naming the shared goals."""
    data, files = config.data, config.data.goal_set_files
    if not files:
        return {}
    if not config.trainer.learning_report:
        logger.info("%s not evaluated: only the learning report evaluates them, and trainer.learning_report=False",
                    ", ".join(f"data.{name}_val_file={path}" for name, path in files.items()))
        return {}
    sets = {name: AgentDataset(path, data.prompt_key, data.val_max_items) for name, path in files.items()}
    if "control" in sets:
        control = {str(row["item_id"]) for row in sets["control"].rows}
        for what, dataset in (("training data", train_dataset), ("trained goals", sets.get("trained"))):
            shared = sorted(control & {str(row["item_id"]) for row in dataset.rows}) if dataset is not None else []
            if shared:
                logger.warning("data.control_val_file=%s shares %d goals with the %s (e.g. %s): no control, the "
                               "learning report leaves its control section out", data.control_val_file, len(shared),
                               what, shared[:3])
                del sets["control"]
                break
    return sets


class RayPPOTrainer:
    """PPO/GRPO over multi-turn environment rollouts.

    Args:
        config: the validated `PPOConfig` (see `config/schema.py`).
        worker_classes: optional {"actor_rollout": cls, "critic": cls, "reward_model": cls} overriding
            `verl.workers.fsdp_workers.{ActorRolloutRefWorker, CriticWorker, RewardModelWorker}` (constructed
            with the same typed sections).
    """

    def __init__(self, config: PPOConfig, worker_classes: dict | None = None):
        from verl.agent_trainer.ppo.rounds import RoundsScheduler
        from verl.utils.model_utils import load_tokenizer
        from verl.utils.reward_score import load_custom_score_fn
        from verl.workers.reward_manager import get_reward_manager_cls

        check_config(config)
        if config.trainer.rollout_overlap:
            check_overlap_supported(config)
        self.train_loader = StatefulDataLoader(
            AgentDataset(config.data.train_paths, config.data.prompt_key),
            config.data.train_batch_size, shuffle=config.data.shuffle, seed=config.data.seed)
        self.val_dataset = (AgentDataset(config.data.val_paths, config.data.prompt_key, config.data.val_max_items)
                            if config.data.val_paths else None)
        # the goal sets of the training pool the learning report evaluates too ("trained", "control")
        self.goal_sets = _goal_sets(config, self.train_loader.dataset)
        steps = config.trainer.total_training_steps or len(self.train_loader) * config.trainer.total_epochs
        self.total_training_steps = steps
        self.config = config = _with_total_steps(config, steps)
        self.use_critic, self.use_ref = use_critic(config), config.use_reference_policy
        model = config.actor_rollout_ref.model
        self.tokenizer = load_tokenizer(os.path.expanduser(model.tokenizer_path or model.path), model.trust_remote_code)
        # the learning report's expert probe: its demonstrations as trajectory rows, tokenised once
        self.probe_batch = (probe_batch(self.tokenizer, load_demos(config.data.expert_probe_file),
                                        config.actor_rollout_ref.rollout.max_model_len,
                                        config.actor_rollout_ref.rollout.system_prompt)
                            if config.data.expert_probe_file and config.trainer.learning_report else None)
        custom = config.custom_reward_function
        self.reward_fn = get_reward_manager_cls(config.reward_model.reward_manager)(
            tokenizer=self.tokenizer, num_examine=0, reward_fn_key=config.data.reward_fn_key,
            compute_score=load_custom_score_fn(custom.path, custom.name) if custom.path else None,
            config=config.reward_model)
        self.use_rm = config.reward_model.enable
        self.kl_ctrl = core_algos.get_kl_controller(config.algorithm.kl_ctrl)
        self.rounds = RoundsScheduler.from_config(config.algorithm.rounds_ctrl)
        self.ckpt = CheckpointManager(config.trainer.default_local_dir, config.trainer.max_actor_ckpt_to_keep)
        self.worker_classes = worker_classes or {}
        self.global_steps = 0
        self.actor_wg = self.ref_wg = self.critic_wg = self.rm_wg = None
        self.env_fleet: Any = None
        self.placement: NodePlacement | None = None
        self.overlap = (RolloutOverlap(self._submit_next_rollout, lambda: self.actor_wg.call_all("sync_weights"),
                                       self.train_loader.state_dict)
                        if config.trainer.rollout_overlap else None)
        self._generated: DataProto | None = None  # filter_groups: every row the step rolled out

    # ------------------------------------------------------------------ setup
    def init_workers(self) -> None:
        """Create the worker groups: actor+rollout (+ the reference policy in the same process when a
        KL term is on, verl's hybrid `actor_rollout_ref` role), a critic when values are needed and a
        reward model when `reward_model.enable`."""
        from verl.workers import fsdp_workers

        cfg = self.config
        actor_cls = self.worker_classes.get("actor_rollout", fsdp_workers.ActorRolloutRefWorker)
        critic_cls = self.worker_classes.get("critic", fsdp_workers.CriticWorker)
        rm_cls = self.worker_classes.get("reward_model", fsdp_workers.RewardModelWorker)
        on_gpu = cfg.trainer.device == "cuda"
        # a rank per GPU on GPU nodes; on CPU one rank per node (trainer.n_gpus_per_node is not read)
        per_node = cfg.trainer.n_gpus_per_node if on_gpu else 1
        world = cfg.trainer.nnodes * per_node
        check_batch_divides_ranks(cfg, world)
        self._start_env_fleet()
        cfg = self.config
        n_groups = 1 + int(self.use_critic) + int(self.use_rm)
        if on_gpu or cfg.trainer.nnodes > 1:  # per-node placement groups; rank r of every group shares bundle r
            bundle = {"CPU": cfg.ray_init.worker_num_cpus * n_groups, **({"GPU": 1.0} if on_gpu else {})}
            self.placement = node_placement(cfg.trainer.nnodes, per_node, bundle)
        opts = dict(world_size=world, num_cpus=cfg.ray_init.worker_num_cpus,
                    num_gpus=(1.0 / n_groups) if on_gpu else 0.0, placement=self.placement,
                    env_vars=None if on_gpu else {"OMP_NUM_THREADS": str(self._cpu_threads_per_worker(n_groups))})
        start = time.perf_counter()
        role = "actor_rollout_ref" if self.use_ref else "actor_rollout"
        # rollout_overlap: generate_sequences runs in its own concurrency group, beside the update
        overlap_group = {RolloutOverlap.CONCURRENCY_GROUP: 1} if self.overlap is not None else None
        # each worker gets the typed config sections it reads
        self.actor_wg = WorkerGroup(actor_cls, (cfg.actor_rollout_ref, role, cfg.data, cfg.trainer), name=role,
                                    **opts, concurrency_groups=overlap_group)
        self.ref_wg = self.actor_wg if self.use_ref else None
        if self.use_critic:
            self.critic_wg = WorkerGroup(critic_cls, (cfg.critic, cfg.actor_rollout_ref, cfg.trainer), name="critic",
                                         **opts)
        if self.use_rm:
            self.rm_wg = WorkerGroup(rm_cls, (cfg.reward_model, cfg.actor_rollout_ref.model, cfg.trainer),
                                     name="reward_model", **opts)
        for wg in self._groups():
            wg.call_all("init_model")
        logger.info("worker groups %s ready in %.1f s (world size %d, device %s)",
                    [wg.name for wg in self._groups()], time.perf_counter() - start, world, cfg.trainer.device)

    def _cpu_threads_per_worker(self, n_groups: int) -> int:
        """torch threads of each CPU worker: `ray_init.worker_cpu_threads`, else the node's cores shared by the
        `n_groups` worker groups on it (the phases of a step run one after another, so an update or log-prob
        pass can use the cores; Ray alone would pin a fractional-CPU actor to one thread)."""
        import ray

        if self.config.ray_init.worker_cpu_threads:
            return self.config.ray_init.worker_cpu_threads
        node_cores = ray.cluster_resources().get("CPU", os.cpu_count() or 1) / max(1, self.config.trainer.nnodes)
        return max(1, int(node_cores) // n_groups)

    def _start_env_fleet(self) -> None:
        """With `agentgym.env_servers.num > 0`: launch the env fleet and use its addresses as `agentgym.env_addr`."""
        agentgym = self.config.actor_rollout_ref.agentgym
        if agentgym.env_servers.num:
            from verl.utils.agentgym.fleet import EnvServerFleet

            self.env_fleet = EnvServerFleet(agentgym.env_servers, agentgym.task_name)
            self.config = _with_env_addrs(self.config, self.env_fleet.start())
        for i, addr in enumerate(self.config.actor_rollout_ref.agentgym.env_addrs):
            logger.info("env server %d (metrics rollout/env_server%d/*): %s", i, i, addr)

    def _groups(self) -> list[WorkerGroup]:
        groups = []
        for wg in (self.actor_wg, self.ref_wg, self.critic_wg, self.rm_wg):
            if wg is not None and all(wg is not g for g in groups):
                groups.append(wg)
        return groups

    # ------------------------------------------------------------------ the loop
    def fit(self) -> dict:
        """Train until `total_training_steps`; returns the last step's metrics.

        With `trainer.learning_report`, validates before the first and after the last step and writes
        the learning report; with `trainer.plots` (and the `file` logger), plots metrics.jsonl at the end.
        With `trainer.rollout_overlap`, each step starts the next step's rollout beside its update.
        """
        from tqdm import tqdm

        cfg = self.config.trainer
        start = time.perf_counter()
        tracker = Tracking(cfg.project_name, cfg.experiment_name, cfg.loggers, to_dict(self.config),
                           cfg.log_dir or os.path.join(cfg.default_local_dir, "logs"))
        self._load_checkpoint()
        first_step, metrics = self.global_steps, {}
        before = after = None  # greedy validation outcomes (learning report)
        goal_sets: dict[str, dict] = {}  # the learning report's greedy outcomes on its goal sets: {name: {when: ..}}
        probe: dict[str, list[float]] = {}  # the expert probe's per-goal log-likelihoods: {when: [...]}
        budget = _TimeBudget(cfg.time_budget_s, start)
        stopped = False  # by the time budget, before the last step
        bar = tqdm(total=self.total_training_steps, initial=self.global_steps, desc="training steps")
        try:
            kept = (load_kept_before(cfg.default_local_dir, self.global_steps)
                    if cfg.learning_report and self.global_steps > 0 else None)
            if kept is not None:  # a resumed run reports against the validation before its first step
                first_step, before, goal_sets, probe = kept["step"], kept["held_out"], kept["goal_sets"], kept["probe"]
                budget.validation_s = kept["seconds"]
            elif self.val_dataset is not None and (cfg.val_before_train or cfg.val_only or cfg.learning_report):
                with budget.timing_validation():
                    metrics = {}
                    before = after = self._validate_with_goal_sets(goal_sets, "before", metrics)
                    self._expert_probe(probe, "before", metrics)
                if cfg.learning_report:
                    keep_before(cfg.default_local_dir, self.global_steps, budget.validation_s, before, goal_sets, probe)
                tracker.log(metrics, step=self.global_steps)
            batches = iter([] if cfg.val_only else self._train_batches())
            for rows in (self.overlap.steps(batches) if self.overlap is not None else batches):
                self.global_steps += 1
                metrics, timing = {}, {}
                last = self.global_steps == self.total_training_steps
                with timer("step", timing):
                    batch = self._train_step(rows, metrics, timing)
                    if self._every(cfg.test_freq) or (last and cfg.learning_report):
                        with timer("testing", timing):
                            after = self._validate_with_goal_sets(goal_sets, "after" if last else None, metrics)
                            if last:
                                self._expert_probe(probe, "after", metrics)
                    saved = self._every(cfg.save_freq) or last
                    if saved:
                        with timer("save_checkpoint", timing):
                            self._save_checkpoint()
                metrics.update(self._step_metrics(batch, timing))
                self._generated = None
                tracker.log(metrics, step=self.global_steps)
                bar.update(1)
                budget.add_step(timing)
                if not last and not budget.fits_next(self.global_steps + 1 == self.total_training_steps
                                                     and cfg.learning_report):
                    if not saved:
                        self._save_checkpoint()
                    stopped = True
                    logger.warning("trainer.time_budget_s=%s: stopping after step %d of %d (%.0f s used; the next "
                                   "step%s would not fit); checkpointed: rerun the same command to resume",
                                   cfg.time_budget_s, self.global_steps, self.total_training_steps, budget.used_s(),
                                   " and the final validation" if cfg.learning_report else "")
                    break
            if cfg.learning_report and kept is not None and after is None:  # resumed after the last step
                metrics = {}
                after = self._validate_with_goal_sets(goal_sets, "after", metrics)
                self._expert_probe(probe, "after", metrics)
        finally:
            bar.close()
            tracker.finish()
        if cfg.learning_report and not stopped:
            self._write_learning_report(before, after, goal_sets, probe, first_step, time.perf_counter() - start)
        if cfg.plots and "file" not in cfg.loggers:
            logger.info("trainer.plots: no plots without the file logger (add 'file' to trainer.logger)")
        elif cfg.plots:
            plot_run(tracker.log_dir)
            if cfg.learning_report and not stopped:
                draw_report_figure(cfg.default_local_dir, os.path.join(tracker.log_dir, "plots"))
        return metrics

    def _train_step(self, rows: list[dict], metrics: dict, timing: dict) -> DataProto | None:
        """One step's stages (`_stages`) in order, each under its named timer. Returns the trained batch (None:
        filter_groups kept no group, nothing to update). With rollout_overlap the next step's rollout starts once
        this step's is in; it is joined at the end of the step, before the engine gets the new weights."""
        batch = self._new_batch(rows)
        for name, stage in self._stages():
            with timer(name, timing):
                batch = stage(batch, metrics)
            if batch is None:
                break
            if name == "gen" and self.overlap is not None:
                self.overlap.launch_next()
        if self.overlap is not None:
            self.overlap.join(metrics, timing)
        return batch

    def _stages(self) -> list[tuple[str, Callable[[DataProto, dict], DataProto]]]:
        """The step's stages in order; roles that are off contribute no stage."""
        stages = [("gen", self._rollout), ("reward", self._rewards)]
        if self.config.algorithm.filter_groups.enable:
            stages += [("filter", self._filter_groups)]
        # with use_rollout_log_probs the update's pi_old is the engine's log-probs: a recompute would only feed
        # metrics (rollout/log_prob_diff), unless the reward-side KL reads it
        cfg = self.config
        if not cfg.actor_rollout_ref.actor.use_rollout_log_probs or cfg.algorithm.use_kl_in_reward:
            stages += [("old_log_prob", self._old_log_probs)]
        stages += [("ref", self._ref_log_probs)] if self.use_ref else []
        stages += [("values", self._values)] if self.use_critic else []
        stages += [("adv", self._advantages)]
        stages += [("update_critic", self._update_critic)] if self.use_critic else []
        return stages + [("update_actor", self._update_actor)]

    def _every(self, freq: int) -> bool:
        return freq > 0 and self.global_steps % freq == 0

    def _train_batches(self) -> Iterator[list[dict]]:
        while self.global_steps < self.total_training_steps:
            yield from _take(iter(self.train_loader), self.total_training_steps - self.global_steps)

    # ------------------------------------------------------------------ stages (DataProto in, DataProto out)
    def _new_batch(self, rows: list[dict], n: int | None = None) -> DataProto:
        """Rows -> DataProto with one uid per prompt, repeated n (default rollout.n) times, interleaved."""
        batch = rows_to_dataproto(rows)
        batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in rows], dtype=object)
        return batch.repeat(n or self.config.actor_rollout_ref.rollout.n, interleave=True)

    def _generate(self, batch: DataProto, first_row: int = 0) -> DataProto:
        """Roll out `batch` across the ranks and wait (`_submit_generate`)."""
        return self._submit_generate(batch, first_row).result()

    def _submit_generate(self, batch: DataProto, first_row: int = 0, concurrency_group: str | None = None) -> DPCall:
        """Start rolling out `batch` across the ranks. Rows are numbered before the split (`rollout_row`),
        so the agent loop's sampling seeds are unique over the whole batch, not per rank."""
        batch.non_tensor_batch["rollout_row"] = np.arange(first_row, first_row + len(batch), dtype=np.int64)
        return self.actor_wg.submit_dp("generate_sequences", batch, concurrency_group)

    def _set_rollout_meta(self, batch: DataProto, step: int) -> None:
        batch.meta_info.update(global_step=step, validate=False, max_rounds=self.rounds.max_rounds(step))

    def _submit_next_rollout(self, rows: list[dict]) -> tuple[DataProto, DPCall]:
        """rollout_overlap: the next step's batch and its rollout, started in the overlap's concurrency group;
        the engine still holds the weights from before this step's update (which defers its sync)."""
        batch = self._new_batch(rows)
        self._set_rollout_meta(batch, self.global_steps + 1)
        return batch, self._submit_generate(batch, concurrency_group=RolloutOverlap.CONCURRENCY_GROUP)

    def _rollout(self, batch: DataProto, metrics: dict) -> DataProto:
        """Generate the step's trajectories; with rollout_overlap, take the ones the previous step started."""
        ahead = self.overlap.take() if self.overlap is not None else None
        if ahead is None:  # without rollout_overlap; with it, the first step (and the first after a resume)
            self._set_rollout_meta(batch, self.global_steps)
            out = self._generate(batch)
        else:
            batch, out = ahead
        agentgym = self.config.actor_rollout_ref.agentgym
        check_env_failures(out, agentgym.max_failed_frac, agentgym.env_addrs)
        # The loop's own timers (engine-busy, env-busy, ...) sit beside the stage timers as timing_s/rollout_*.
        metrics.update({k.replace("timing_s/", "timing_s/rollout_"): v for k, v in out.meta_info.items()
                        if _is_metric(k, v) and k != "timing_s/rollout"})
        # sessions and failures per env server over every rank's rows (meta_info holds rank 0's only)
        ntb = out.non_tensor_batch
        if "env_server" in ntb:
            metrics.update(env_server_metrics(ntb["env_server"], ntb["env_error"], agentgym.env_addrs))
        # what the advantage estimator needs beyond the rollout (registry: core_algos.estimator_needs)
        extra = {need: self._ESTIMATOR_NEEDS[need](self, batch)
                 for need in core_algos.estimator_needs(self.config.algorithm.adv_estimator)}
        batch = batch.union(out)
        batch.batch.update(extra)
        return batch

    def _greedy_baselines(self, batch: DataProto) -> torch.Tensor:
        """ReMax's baseline (as in verl): the score of one greedy rollout per prompt, repeated for its
        n interleaved samples. The greedy pass runs as a validation-mode rollout (temperature 0)."""
        n = self.config.actor_rollout_ref.rollout.n
        prompts = batch.slice(step=n)
        prompts.meta_info.update(validate=True, val_temperature=0.0)
        greedy = self._score(prompts.union(self._generate(prompts)))
        return greedy.batch["token_level_scores"].sum(-1).repeat_interleave(n)

    # need -> how the trainer produces it (the estimators that need it say so when they register)
    _ESTIMATOR_NEEDS = {"reward_baselines": _greedy_baselines}

    def _score(self, batch: DataProto, metrics: dict | None = None, prefix: str = "") -> DataProto:
        """The one owner of the reward: the reward manager turns what the rollout returned (env score,
        rule score, and the reward model's `rm_scores` when one is on) into `token_level_scores`.
        `reward` (the env / rule score of the row) and `success` (`is_success`) are rewritten from
        the manager's result too, so training metrics and validation read it; the reward model
        shapes the training signal, never the outcome. The manager's reward/* metrics go into
        `metrics` under `prefix`."""
        if self.rm_wg is not None:
            batch = batch.union(self.rm_wg.call_dp("compute_rm_score", batch))
        result = self.reward_fn(batch, return_dict=True)
        batch.batch["token_level_scores"] = result["reward_tensor"]
        totals = result["task_scores"].tolist()
        batch.non_tensor_batch["reward"] = np.array(totals, dtype=object)
        batch.non_tensor_batch["success"] = np.array([is_success(r) for r in totals], dtype=object)
        if metrics is not None:
            metrics.update({prefix + k: v for k, v in result["reward_metrics"].items()})
        return batch

    def _rewards(self, batch: DataProto, metrics: dict) -> DataProto:
        return self._score(batch, metrics)

    def _filter_groups(self, batch: DataProto, metrics: dict) -> DataProto | None:
        """`algorithm.filter_groups` (DAPO's dynamic sampling): drop the groups whose rows all score the
        same, and roll out further batches of fresh prompts (up to `max_num_gen_batches` per step) until
        `data.train_batch_size` groups with reward variance are kept. Returns the kept rows (None: none).
        Every generated row still feeds the step's env/* and critic/score/* metrics (`_step_metrics`)."""
        fg = self.config.algorithm.filter_groups
        kept = GroupFilter(fg.metric, self.config.data.train_batch_size, fg.max_num_gen_batches)
        kept.add(batch)
        while kept.needs_more():
            rows = self._next_rows()
            if rows is None:
                break
            more = self._new_batch(rows)
            kept.add(self._rewards(self._rollout(more, {}), {}))
        self._generated = kept.all_generated()
        metrics.update(kept.metrics())
        return kept.result()

    def _next_rows(self) -> list[dict] | None:
        """A batch of fresh prompts outside the step count (refills): the rest of this epoch, else the
        next epoch's first batch."""
        for _ in range(2):
            rows = next(iter(self.train_loader), None)
            if rows is not None:
                return rows
        return None

    def _old_log_probs(self, batch: DataProto, metrics: dict) -> DataProto:
        """`old_log_probs` under the actor about to be updated; `training/weight_staleness` = actor
        updates between the weights that generated the batch and that actor (1 with rollout_overlap)."""
        out = self.actor_wg.call_dp("compute_log_prob", batch)
        actor_version = out.meta_info.pop("actor_weights_version", None)
        rollout_version = batch.meta_info.get("rollout_weights_version")
        if actor_version is not None and rollout_version is not None:
            metrics["training/weight_staleness"] = actor_version - rollout_version
        return batch.union(out)

    def _ref_log_probs(self, batch: DataProto, metrics: dict) -> DataProto:
        return batch.union(self.ref_wg.call_dp("compute_ref_log_prob", batch))

    def _values(self, batch: DataProto, metrics: dict) -> DataProto:
        return batch.union(self.critic_wg.call_dp("compute_values", batch))

    def _advantages(self, batch: DataProto, metrics: dict) -> DataProto:
        """Reward-side KL when `algorithm.use_kl_in_reward`, then the registered estimator (core_algos).

        A group estimator drops the rows left alone in their group by failures (`rollout/lone_survivors`)."""
        algo = self.config.algorithm
        if algo.use_kl_in_reward:
            batch, kl_metrics = core_algos.apply_kl_penalty(batch, self.kl_ctrl, algo.kl_penalty)
            metrics.update(kl_metrics)
        else:
            batch.batch["token_level_rewards"] = batch.batch["token_level_scores"]
        batch = core_algos.compute_advantage(batch, algo.adv_estimator, config=algo)
        if "lone_survivors" in batch.meta_info:
            metrics["rollout/lone_survivors"] = batch.meta_info.pop("lone_survivors")
        return batch

    def _update_critic(self, batch: DataProto, metrics: dict) -> DataProto:
        out = self.critic_wg.call_dp("update_critic", batch)
        metrics.update(metric_utils.reduce_metrics(out.meta_info.get("metrics", {})))
        return batch

    def _update_actor(self, batch: DataProto, metrics: dict) -> DataProto:
        if self.global_steps <= self.config.trainer.critic_warmup:
            return batch
        batch.meta_info["global_step"] = self.global_steps
        if self.overlap is not None:  # the engine keeps the old weights while the next rollout runs
            batch.meta_info["sync_weights"] = False
        out = self.actor_wg.call_dp("update_actor", batch)
        metrics.update(metric_utils.reduce_metrics(out.meta_info.get("metrics", {})))
        return batch

    def _step_metrics(self, batch: DataProto | None, timing: dict) -> dict:
        """The step's metrics. With filter_groups, env/* and critic/score/* describe every generated row
        (what the policy did), the rest the rows trained on; with no row kept, only the former."""
        generated = self._generated
        out = {} if batch is None else metric_utils.compute_data_metrics(batch, use_critic=self.use_critic)
        if generated is not None:
            out.update({k: v for k, v in metric_utils.compute_data_metrics(generated, use_critic=False).items()
                        if k.startswith(("env/", "critic/score/"))})
        timed = batch if batch is not None else generated
        out.update(metric_utils.compute_timing_metrics(timed, timing))
        out.update(metric_utils.compute_throughout_metrics(timed, timing, n_gpus=self.actor_wg.world_size))
        out.update({"training/global_step": self.global_steps, "training/epoch": self.train_loader.epoch,
                    "rollout/max_rounds": timed.meta_info.get("max_rounds", 0)})
        return out

    # ------------------------------------------------------------------ validation
    def _validate_sets(self, datasets: list[AgentDataset]) -> list[dict[str, dict]]:
        """Success rate and mean reward (with 95% CIs, `metric_utils.compute_outcome_metrics`) on each of
        `datasets` (item ids): a greedy pass (n=1), plus a sampled pass (val_kwargs.n samples at
        val_kwargs.temperature, else rollout.temperature) when `rollout.val_kwargs.do_sample`.

        The datasets' rows are rolled out together (in batches of `data.val_batch_size` rows, default all), so
        the engine runs one batch with one tail of long trajectories, not one per dataset. Each row of a
        dataset is one item; its trajectories (a failed one too) count for it. Trajectories the env could not
        score without an LLM judge are counted in `needs_judge` and left out of the rates and their CIs
        (`val/<mode>/needs_judge`, `val/<mode>/scored_items`).

        Returns:
            for each dataset, `{mode: outcome}` for mode in ("greedy"[, "sampled"]); outcomes also carry
            `num_turns` and `per_item` (ids = the rows' item ids) for pairing two validations
            (`compute_outcome_change`).
        """
        rcfg = self.config.actor_rollout_ref.rollout
        modes = {"greedy": (0.0, 1)}
        if rcfg.val_kwargs.do_sample:
            modes["sampled"] = (rcfg.val_kwargs.temperature or rcfg.temperature, rcfg.val_kwargs.n)
        rows = [dataset[i] for dataset in datasets for i in range(len(dataset))]
        bounds = np.cumsum([0] + [len(dataset) for dataset in datasets])  # dataset k: rows [bounds[k], bounds[k+1])
        outcomes: list[dict[str, dict]] = [{} for _ in datasets]
        size = self.config.data.val_batch_size or len(rows)
        for mode, (temperature, n) in modes.items():
            results = []
            for start in range(0, len(rows), size):
                batch = self._new_batch(rows[start:start + size], n=n)
                batch.meta_info.update(global_step=self.global_steps, validate=True, val_temperature=temperature,
                                       max_rounds=self.config.actor_rollout_ref.agentgym.max_rounds)
                results.append(self._generate(batch, first_row=start * n))
            generated = DataProto.concat(results)
            row_of = generated.non_tensor_batch["rollout_row"].astype(np.int64) // n  # rows are numbered n-wise
            for k, dataset in enumerate(datasets):
                picked = np.nonzero((row_of >= bounds[k]) & (row_of < bounds[k + 1]))[0]
                reward_metrics: dict = {}  # reward/* of the reward stack (e.g. a learned RM's scores)
                out = self._score(generated.select_idxs(picked), reward_metrics)
                nt = out.non_tensor_batch
                # rows that need an LLM judge are counted (needs_judge) but are no failures: out of the rates
                outcome = metric_utils.compute_outcome_metrics(
                    [int(row) // n - int(bounds[k]) for row in nt["rollout_row"]],  # the item's row in `dataset`
                    list(nt["reward"]), list(nt["success"]), seed=rcfg.seed, needs_judge=nt.get("needs_judge"),
                    per_item=True)
                outcome["per_item"]["ids"] = [str(dataset[i]["item_id"]) for i in outcome["per_item"]["ids"]]
                outcomes[k][mode] = {
                    **outcome,
                    "num_turns": float(np.mean(nt["num_turns"].astype(float))),
                    **reward_metrics,
                }
        return outcomes

    def _validate_with_goal_sets(self, outcomes: dict[str, dict], when: str | None, metrics: dict) -> dict[str, dict]:
        """`_validate_sets` of the validation set, its metrics as `val/<mode>/*`; with `when` and the learning report,
        the report's goal sets of the training pool (`data.trained_val_file`, `data.control_val_file`) in the
        same rollout: each one's greedy outcome as `outcomes[name][when]`, its metrics as `val_<name>/<mode>/*`.

        Returns:
            the validation set's `{mode: outcome}`.
        """
        names = list(self.goal_sets) if when is not None and self.config.trainer.learning_report else []
        held_out, *sets = self._validate_sets([self.val_dataset] + [self.goal_sets[name] for name in names])
        metrics.update(_val_metrics(held_out))
        for name, result in zip(names, sets, strict=True):
            outcomes.setdefault(name, {})[when] = result["greedy"]
            metrics.update(_val_metrics(result, prefix=f"val_{name}"))
        return held_out

    def _expert_probe(self, outcomes: dict[str, list[float]], when: str, metrics: dict) -> None:
        """The learning report's expert probe (`data.expert_probe_file`): each demonstration's mean log-probability
        of the expert's tokens under the actor as `outcomes[when]`, their mean as `val_expert/log_likelihood`."""
        if self.probe_batch is None:
            return
        out = self.actor_wg.call_dp("compute_log_prob", self.probe_batch)
        outcomes[when] = per_goal_log_likelihood(out.batch["old_log_probs"], self.probe_batch.batch["response_mask"])
        metrics["val_expert/log_likelihood"] = float(np.mean(outcomes[when]))

    def _write_learning_report(self, before: dict | None, after: dict | None, goal_sets: dict[str, dict],
                               probe: dict[str, list[float]], first_step: int, seconds: float) -> str:
        """learning_report.json in `trainer.default_local_dir` from the greedy validations around training
        (`learning_report.write_training_report`)."""
        if before is None or after is None:
            raise RuntimeError("trainer.learning_report=True but no validation ran (no validation items)")
        cfg = self.config
        return write_training_report(
            cfg.trainer.default_local_dir, before["greedy"], after["greedy"], goal_sets, probe,
            probe_ids=list(self.probe_batch.non_tensor_batch["item_id"]) if self.probe_batch is not None else [],
            first_step=first_step,
            last_step=self.global_steps, seconds=seconds, seed=cfg.actor_rollout_ref.rollout.seed,
            goal_set_files=cfg.data.goal_set_files, probe_file=cfg.data.expert_probe_file, data_seed=cfg.data.seed,
            val_files=cfg.data.val_paths, model_path=cfg.actor_rollout_ref.model.path)

    # ------------------------------------------------------------------ checkpoints
    def _save_checkpoint(self) -> str:
        step_dir = self.ckpt.step_dir(self.global_steps)
        self.actor_wg.call_all("save_checkpoint", os.path.join(step_dir, "actor"), self.global_steps)
        if self.critic_wg is not None:
            self.critic_wg.call_all("save_checkpoint", os.path.join(step_dir, "critic"), self.global_steps)
        if self.config.exports_hf:
            self.actor_wg.call_all("export_hf", os.path.join(step_dir, "actor", "huggingface"))
        # rollout_overlap: the loader as before the next step's rows were drawn (a resume re-primes that rollout)
        loader_state = self.overlap.loader_state if self.overlap is not None else None
        self.ckpt.save_trainer_state(self.global_steps, loader_state or self.train_loader.state_dict(),
                                     extra={"kl_coef": float(self.kl_ctrl.value)})
        logger.info("saved checkpoint %s", step_dir)
        return step_dir

    def _load_checkpoint(self) -> None:
        cfg = self.config.trainer
        step_dir = self.ckpt.resolve_resume(cfg.resume_mode, cfg.resume_from_path)
        if step_dir is None:
            logger.info("training from scratch (trainer.resume_mode=%s, no checkpoint used)", cfg.resume_mode)
            return
        state = self.ckpt.load_trainer_state(step_dir)
        self.actor_wg.call_all("load_checkpoint", os.path.join(step_dir, "actor"))
        if self.critic_wg is not None:
            self.critic_wg.call_all("load_checkpoint", os.path.join(step_dir, "critic"))
        self.train_loader.load_state_dict(state["dataloader"])
        self.kl_ctrl.value = state.get("kl_coef", self.kl_ctrl.value)
        self.global_steps = int(state["global_step"])
        logger.info("resumed from %s at global step %d", step_dir, self.global_steps)

    def shutdown(self) -> None:
        """Stop rollout engines, kill the worker actors, release their placement groups, stop the env
        fleet and the reward manager's scorer processes (the Ray runtime is left to the caller)."""
        for wg in self._groups():
            with contextlib.suppress(Exception):
                wg.call_all("shutdown")
            wg.kill()
        if self.placement is not None:
            self.placement.remove()
        if self.env_fleet is not None:
            self.env_fleet.stop()
        self.reward_fn.close()


def _take(it: Iterator, n: int) -> Iterator:
    for _, item in zip(range(n), it, strict=False):
        yield item


def _val_metrics(outcomes: dict[str, dict], prefix: str = "val") -> dict[str, float]:
    """Tracker metrics of `_validate_sets` outcomes: `<prefix>/<mode>/<name>`, CIs as `<name>_ci95_lo` / `_hi`
    (the per-item results stay out of the tracker)."""
    metrics: dict[str, float] = {}
    for mode, outcome in outcomes.items():
        for name, value in outcome.items():
            if isinstance(value, list):
                metrics[f"{prefix}/{mode}/{name}_lo"], metrics[f"{prefix}/{mode}/{name}_hi"] = value
            elif name != "per_item":
                metrics[f"{prefix}/{mode}/{name}"] = value
    return metrics


def _is_metric(key: str, value: Any) -> bool:
    return "/" in key and isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def _with_env_addrs(config: PPOConfig, addrs: list[str]) -> PPOConfig:
    """`actor_rollout_ref.agentgym.env_addr` replaced by `addrs` (the env fleet's servers)."""
    arr = config.actor_rollout_ref
    return dataclasses.replace(config, actor_rollout_ref=dataclasses.replace(
        arr, agentgym=dataclasses.replace(arr.agentgym, env_addr=list(addrs))))


class _TimeBudget:
    """`trainer.time_budget_s` bookkeeping: the wall time used since fit() began, the longest step so far (less
    its validation and checkpoint, which the estimate adds itself) and the validation's duration."""

    def __init__(self, seconds: float | None, start: float):
        self.seconds, self.start = seconds, start
        self.validation_s = 0.0
        self.step_s = self.save_s = 0.0

    @contextlib.contextmanager
    def timing_validation(self):
        """Time the validation before training (the final one is assumed to take as long)."""
        t0 = time.perf_counter()
        yield
        self.validation_s = time.perf_counter() - t0

    def add_step(self, timing: dict[str, float]) -> None:
        """Account a finished step from its timers (`step`, `testing`, `save_checkpoint`)."""
        self.save_s = max(self.save_s, timing.get("save_checkpoint", 0.0))
        self.step_s = max(self.step_s, timing["step"] - timing.get("testing", 0.0) - timing.get("save_checkpoint", 0.0))

    def used_s(self) -> float:
        return time.perf_counter() - self.start

    def fits_next(self, with_validation: bool) -> bool:
        """Whether one more step (with its checkpoint, and the final validation when `with_validation`) fits."""
        if self.seconds is None:
            return True
        need = self.step_s + self.save_s + (self.validation_s if with_validation else 0.0)
        return self.used_s() + need <= self.seconds


def _with_total_steps(config: PPOConfig, steps: int) -> PPOConfig:
    """Fill `optim.total_training_steps` of actor and critic (used by LR schedules)."""
    arr = config.actor_rollout_ref
    actor = dataclasses.replace(arr.actor, optim=dataclasses.replace(arr.actor.optim, total_training_steps=steps))
    critic = dataclasses.replace(
        config.critic, optim=dataclasses.replace(config.critic.optim, total_training_steps=steps)
    )
    return dataclasses.replace(config, actor_rollout_ref=dataclasses.replace(arr, actor=actor), critic=critic)
