"""The server-side environment contract: what one env session must do, with typed results.

A server built on the kit holds one `Session` per `env_idx`. The results are the same types the
client side returns (`agentenv.controller.types.ResetResult` / `StepResult`), so one contract runs
from the environment through HTTP to the agent loop. Each server only decides how its results are
written on the wire (WebShop's `[observation, null]`, WebArena's `{"observation", ...}`), because
AgentGym's own clients expect those shapes.

Rules every session keeps:
- `reset(idx)` starts item `idx` (None: the env may pick one) and returns the first observation;
- `step(action)` never raises for a bad action: the observation (or `info`) says what was wrong;
- `observe()` is the observation the agent would see now (the same text `step` returned last);
- `close()` frees what the session holds and is safe to call twice.
"""
from __future__ import annotations

from typing import Optional, Protocol, runtime_checkable

from agentenv.controller.types import ResetResult, StepResult

__all__ = ["ResetResult", "Session", "StepResult", "check_session"]


@runtime_checkable
class Session(Protocol):
    """One environment episode holder, driven by the server kit's routes (see module docstring)."""

    def reset(self, idx: Optional[int]) -> ResetResult:
        """Start item `idx` (None: the environment chooses) and return the first observation."""
        ...

    def step(self, action: str) -> StepResult:
        """Apply one agent action; an invalid action is an observation, never an exception."""
        ...

    def observe(self) -> str:
        """The current observation text."""
        ...

    def close(self) -> None:
        """Free the session's resources (idempotent)."""
        ...


def check_session(session: object) -> None:
    """Raise a `TypeError` naming the missing methods when `session` does not follow `Session`.

    The app factory calls it on the first session it builds, so a server that forgets a method fails
    at its first /create with a message, not at some later request.
    """
    missing = [name for name in ("reset", "step", "observe", "close") if not callable(getattr(session, name, None))]
    if missing:
        raise TypeError(f"{type(session).__name__} is not an agentenv Session: it lacks {', '.join(missing)} "
                        "(see agentenv.server.session.Session)")
