"""Rollout result types: what one trajectory (a row of the rollout batch) produced.

The env side of the contract (`ResetResult`, `StepResult`) lives in `agentenv.controller.types`,
where every env client implements it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Trajectory"]


@dataclass
class Trajectory:
    """Everything one rollout row produced (token lists are unpadded)."""

    item_id: str
    prompt_ids: list[int] = field(default_factory=list)
    response_ids: list[int] = field(default_factory=list)
    response_mask: list[int] = field(default_factory=list)
    log_probs: list[float] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)
    turn_rewards: list[float] = field(default_factory=list)
    turn_end_idx: list[int] = field(default_factory=list)   # response index of each turn's last model token
    anchor_obs: list[str] = field(default_factory=list)     # observation each turn acted on
    reward: float = 0.0
    num_turns: int = 0
    terminated: bool = False
    truncated: bool = False
    env_error: str = ""
    needs_judge: bool = False  # the env could not score the episode without an LLM judge (not trained on)
    env_server: str = ""       # address of the env server the trajectory ran on ("" for chat rows)
    gen_s: float = 0.0
    env_s: float = 0.0
    generated_tokens: int = 0
    invalid_actions: int = 0   # env steps whose info said valid=false (unparseable or not allowed there)

    def add_model_tokens(self, ids: list[int], log_probs: list[float]) -> None:
        self.response_ids.extend(ids)
        self.response_mask.extend([1] * len(ids))
        self.log_probs.extend(float(x) for x in log_probs)
        self.generated_tokens += len(ids)
        if ids:
            self.turn_end_idx.append(len(self.response_ids) - 1)

    def add_context_tokens(self, ids: list[int]) -> None:
        self.response_ids.extend(ids)
        self.response_mask.extend([0] * len(ids))
        self.log_probs.extend([0.0] * len(ids))
