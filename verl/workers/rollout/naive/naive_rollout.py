"""Single-turn rollout: one generation for a chat prompt (rows of non-environment datasets, e.g. a
verl-format parquet scored by a rule). The agent loop runs these rows through `single_turn_trajectory`
beside its multi-turn env rows, so both kinds share one batch layout and one reward path.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from verl.workers.rollout.schemas import Trajectory
from verl.workers.rollout.tokenizer import encode_text, render_chat

__all__ = ["SingleTurnBudget", "single_turn_trajectory"]


@dataclass(frozen=True)
class SingleTurnBudget:
    """Token limits of one single-turn row: `data.max_prompt_length`, `data.max_response_length`,
    `rollout.max_model_len`, `rollout.max_tokens`."""

    max_prompt_length: int
    max_response_length: int
    max_model_len: int
    max_tokens: int


async def single_turn_trajectory(tokenizer, item_id: str, messages: list[dict], budget: SingleTurnBudget,
                                 generate: Callable[[Trajectory, int], Awaitable]) -> Trajectory:
    """Render `messages` as the prompt and generate one answer.

    Args:
        generate: `(trajectory, max_tokens) -> GenerationOutput`; it records the sampled ids and
            log-probs in the trajectory (the agent loop's generation step).

    Returns:
        The trajectory; a prompt over `max_prompt_length` is not generated for (`env_error`
        "prompt_too_long", never trained on); an answer cut by the token limit is `truncated`.
    """
    traj = Trajectory(item_id=item_id, messages=list(messages))
    traj.prompt_ids = encode_text(tokenizer, render_chat(tokenizer, messages, add_generation_prompt=True))
    if len(traj.prompt_ids) > budget.max_prompt_length:
        traj.env_error = (f"prompt_too_long: {len(traj.prompt_ids)} tokens > data.max_prompt_length="
                          f"{budget.max_prompt_length}")
        traj.truncated = True
        return traj
    room = min(budget.max_response_length, budget.max_model_len - len(traj.prompt_ids), budget.max_tokens)
    gen = await generate(traj, room)
    traj.num_turns = 1
    traj.truncated = gen.finish_reason != "stop"
    traj.messages.append({"role": "assistant", "content": tokenizer.decode(gen.token_ids, skip_special_tokens=True)})
    return traj
