"""verl's interaction interface: an external party that answers the assistant between turns.

Same shape as verl's `verl/interactions/base.py` (all methods async): `start_interaction` opens a
per-instance state, `generate_response` gives the next user turn, `calculate_score` the score so
far, `finalize_interaction` releases the instance. Our agent loop talks to env clients directly;
interactions let verl-style tool/interaction agent loops use the same environments.
"""
from __future__ import annotations

import uuid
from typing import Any, Optional

__all__ = ["BaseInteraction"]


class BaseInteraction:
    """Base class; subclasses override the four coroutines.

    Args:
        config: the interaction's `config` dict from the interaction yaml; `name` defaults to
            "interaction_agent".
    """

    def __init__(self, config: dict):
        self.config = dict(config or {})
        self.name: str = self.config.get("name", "interaction_agent")

    async def start_interaction(self, instance_id: Optional[str] = None, **kwargs: Any) -> str:
        """Create per-instance state and return its id (a new uuid4 when None)."""
        return instance_id or str(uuid.uuid4())

    async def generate_response(self, instance_id: str, messages: list[dict], **kwargs: Any
                                ) -> tuple[bool, str, float, dict]:
        """Answer the conversation: (should_terminate_sequence, response_text, turn_score, extra)."""
        return False, "", 0.0, {}

    async def calculate_score(self, instance_id: str, **kwargs: Any) -> float:
        """Score of the instance so far."""
        return 0.0

    async def finalize_interaction(self, instance_id: str, **kwargs: Any) -> None:
        """Release per-instance state."""
