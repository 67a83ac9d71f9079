"""ScalingInter-RL horizon schedule (``algorithm.rounds_ctrl``): the max agent turns per training step.

Owns only the mapping ``global_step -> max_rounds``; the rollout enforces it (the trainer puts it in
``meta_info["max_rounds"]``). The schedule is a pure function of ``global_step`` with no internal
state, so a resumed run gets exactly the values the uninterrupted run would have had.

Boundary convention: ``global_step`` is the 1-based number of the training step about to run (the
first step is 1, as verl's ``trainer.global_steps``). With ``rounds = [R0, R1, ...]`` and
``steps_scaling_inter = K``: steps ``1..K`` use R0, steps ``K+1..2K`` use R1, ..., and the last
value holds afterwards; i.e. ``stage = min((global_step - 1) // K, len(rounds) - 1)``. Step 0 (a
validation pass before training) uses R0. This matches AgentGym-RL's uninterrupted run; its resume
path used ``global_step // K`` and so switched one step early after a resume, which we do not copy.

Config examples::

    rounds_ctrl: {type: fixed, rounds: 15}
    rounds_ctrl: {type: scaling_inter_stepwise, rounds: [8, 12, 15], steps_scaling_inter: 80}
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

__all__ = ["RoundsScheduler", "ROUNDS_CTRL_TYPES"]

ROUNDS_CTRL_TYPES = ("fixed", "scaling_inter_stepwise")


def _as_int(value, what: str) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


class RoundsScheduler:
    """Maximum number of agent-environment rounds for each training step.

    Args:
        type: ``fixed`` or ``scaling_inter_stepwise``.
        rounds: an int for ``fixed``; a non-empty list of ints for ``scaling_inter_stepwise``
            (a one-element list is accepted for ``fixed`` too).
        steps_scaling_inter: steps per stage (``scaling_inter_stepwise`` only; ignored by ``fixed``).

    Raises:
        ValueError: naming the ``algorithm.rounds_ctrl`` key and the bad value.
    """

    def __init__(self, type: str, rounds: Union[int, Sequence[int]], steps_scaling_inter: Optional[int] = None):
        if type not in ROUNDS_CTRL_TYPES:
            raise ValueError(
                f"algorithm.rounds_ctrl.type={type!r} is not supported; choose one of {list(ROUNDS_CTRL_TYPES)}"
            )
        self.type = type
        is_scalar = not hasattr(rounds, "__iter__")
        if type == "fixed":
            if not is_scalar:
                rounds = list(rounds)
                if len(rounds) != 1:
                    raise ValueError(f"algorithm.rounds_ctrl.rounds must be one integer for type=fixed, got {rounds!r}")
                rounds = rounds[0]
            self.rounds = [_as_int(rounds, "algorithm.rounds_ctrl.rounds")]
            self.steps_scaling_inter = None
        else:
            if is_scalar:
                raise ValueError(
                    f"algorithm.rounds_ctrl.rounds must be a list for type=scaling_inter_stepwise, got {rounds!r}"
                )
            rounds = list(rounds)
            if not rounds:
                raise ValueError("algorithm.rounds_ctrl.rounds is empty; give e.g. [8, 12, 15]")
            self.rounds = [_as_int(r, "algorithm.rounds_ctrl.rounds[i]") for r in rounds]
            if steps_scaling_inter is None:
                raise ValueError(
                    "algorithm.rounds_ctrl.steps_scaling_inter is required for type=scaling_inter_stepwise"
                )
            self.steps_scaling_inter = _as_int(steps_scaling_inter, "algorithm.rounds_ctrl.steps_scaling_inter")

    @classmethod
    def from_config(cls, rounds_ctrl) -> "RoundsScheduler":
        """Build from the ``algorithm.rounds_ctrl`` node (reads ``type``, ``rounds``, ``steps_scaling_inter``)."""
        steps = rounds_ctrl.steps_scaling_inter if rounds_ctrl.type == "scaling_inter_stepwise" else None
        return cls(type=rounds_ctrl.type, rounds=rounds_ctrl.rounds, steps_scaling_inter=steps)

    def stage(self, global_step: int) -> int:
        """0-based stage index used at ``global_step`` (see the module docstring for the boundaries)."""
        if global_step < 0:
            raise ValueError(f"global_step must be >= 0, got {global_step}")
        if self.steps_scaling_inter is None:
            return 0
        return min(max(global_step - 1, 0) // self.steps_scaling_inter, len(self.rounds) - 1)

    def max_rounds(self, global_step: int) -> int:
        """Max agent turns for the training step numbered ``global_step`` (1-based)."""
        return self.rounds[self.stage(global_step)]

    def __repr__(self) -> str:
        return (
            f"RoundsScheduler(type={self.type!r}, rounds={self.rounds}, "
            f"steps_scaling_inter={self.steps_scaling_inter})"
        )
