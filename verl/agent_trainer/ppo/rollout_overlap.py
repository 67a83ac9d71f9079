"""The rollout/update overlap (`trainer.rollout_overlap`): one-step off-policy, verl's one_step_off_policy
recipe in one worker group.

Owns the pipeline between two training steps: as soon as step k's rollout is in, step k+1's rows are drawn
and their rollout starts in the actor workers' second Ray concurrency group (`CONCURRENCY_GROUP`), with the
engine's (pre-update) weights, while step k's remaining stages run in the default group. The update defers
its weight sync; at the end of step k the rollout is joined, then the updated weights go into the engine,
and step k+1 takes the finished batch instead of generating one. It also owns the settings the overlap
cannot honour (`check_overlap_supported`).

It does not own the stages, the worker groups or the loader: the trainer hands it callbacks.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

from verl.agent_trainer.ppo import core_algos
from verl.agent_trainer.ppo.metric_utils import timer
from verl.agent_trainer.ppo.worker_group import DPCall
from verl.protocol import DataProto

if TYPE_CHECKING:
    from verl.config.schema import PPOConfig

__all__ = ["RolloutOverlap", "check_overlap_supported"]


def check_overlap_supported(cfg: PPOConfig) -> None:
    """Refuse `trainer.rollout_overlap` with settings it cannot honour, naming the key to change."""
    from verl.config.device import resolve_device

    rollout = cfg.actor_rollout_ref.rollout
    if rollout.name == "sglang":
        raise ValueError("trainer.rollout_overlap=true cannot run actor_rollout_ref.rollout.name=sglang: the "
                         "overlapped rollout would build SGLang's engine off the main thread, where it cannot install "
                         "its signal handlers; use rollout.name=vllm or hf, or turn the overlap off")
    free_cache = rollout.free_cache_engine
    device = resolve_device("auto") if cfg.trainer.device == "auto" else cfg.trainer.device
    if free_cache or (free_cache is None and device == "cuda"):
        raise ValueError("trainer.rollout_overlap=true keeps the rollout engine resident while the actor updates; "
                         "set actor_rollout_ref.rollout.free_cache_engine=false (null means on for CUDA)")
    if cfg.algorithm.filter_groups.enable:
        raise ValueError("trainer.rollout_overlap=true cannot run algorithm.filter_groups.enable=true: refills "
                         "are extra rollouts with the policy being updated; turn one of them off")
    needs = core_algos.estimator_needs(cfg.algorithm.adv_estimator)
    if needs:
        raise ValueError(f"trainer.rollout_overlap=true cannot run algorithm.adv_estimator="
                         f"{cfg.algorithm.adv_estimator}: it needs {sorted(needs)} from extra rollouts with the "
                         "policy being updated")


class RolloutOverlap:
    """Starts the next step's rollout while this step's update runs, and hands back its batch.

    Per step the trainer calls, in order: `launch_next()` once the step's own rollout is in, `join()` at
    the end of the step (after the update), and, in the next step's gen stage, `take()`.

    Args:
        submit_rollout: `rows -> (batch, call)`: the next step's batch and its rollout in flight, submitted
            in `CONCURRENCY_GROUP` (a call whose `result()` waits for the rollout's output).
        sync_weights: pushes the actor's updated weights into the rollout engines.
        loader_state: the train loader's resumable state; read just before the next step's rows are drawn.
    """

    CONCURRENCY_GROUP = "rollout"  # the actor workers' Ray concurrency group of the overlapped rollout

    def __init__(self, submit_rollout: Callable[[list[dict]], tuple[DataProto, DPCall]],
                 sync_weights: Callable[[], None], loader_state: Callable[[], dict]):
        self._submit_rollout = submit_rollout
        self._sync_weights = sync_weights
        self._read_loader_state = loader_state
        self._rows: Iterator[list[dict]] = iter(())
        self._next_rows: list[dict] | None = None
        self._drawn = False
        self._ahead: tuple[DataProto, DPCall] | None = None  # the next step's batch and its rollout in flight
        self._ready: tuple[DataProto, DataProto] | None = None  # the joined rollout: (batch, output)
        self.loader_state: dict | None = None

    def steps(self, rows: Iterator[list[dict]]) -> Iterator[list[dict]]:
        """Each step's rows from `rows`: the first step's drawn here, every later step's by `launch_next`.

        `loader_state` is reset at the start of each step: None until `launch_next` draws the next rows, then
        the loader as it was before (what a checkpoint of this step must hold: a resume re-primes the rollout).
        """
        self._rows = rows
        current = next(rows, None)
        while current is not None:
            self._drawn, self._next_rows, self.loader_state = False, None, None
            yield current
            current = self._next_rows if self._drawn else next(rows, None)

    def launch_next(self) -> None:
        """Draw the next step's rows and start their rollout (nothing to start after the last step)."""
        self.loader_state = self._read_loader_state()
        self._next_rows, self._drawn = next(self._rows, None), True
        if self._next_rows is not None:
            self._ahead = self._submit_rollout(self._next_rows)

    def join(self, metrics: dict[str, Any], timing: dict[str, float]) -> None:
        """End of a step: wait for the next step's rollout, then push the updated weights into the engine.

        Adds `timing_s/overlap` (the rollout time that ran beside the step: its `timing_s/rollout` less the
        wait here) to `metrics`, and the `rollout_wait` and `sync_weights` timers to `timing`.
        """
        if self._ahead is not None:
            batch, call = self._ahead
            self._ahead = None
            with timer("rollout_wait", timing):
                self._ready = (batch, call.result())
            rollout_s = float(self._ready[1].meta_info.get("timing_s/rollout", 0.0))
            metrics["timing_s/overlap"] = max(0.0, rollout_s - timing["rollout_wait"])
        with timer("sync_weights", timing):
            self._sync_weights()

    def take(self) -> tuple[DataProto, DataProto] | None:
        """The batch the previous step started and its rollout output, once; None when there is none (the
        first step, and the first after a resume, generate their own)."""
        ready, self._ready = self._ready, None
        return ready
