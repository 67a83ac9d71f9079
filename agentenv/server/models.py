"""Request models with AgentGym's field names, shared by the env servers.

Fields are strict: `env_idx` must be a JSON integer and `action` a JSON string, so a wrong type
gets a 422 JSON error naming the field instead of being silently coerced.
"""
from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr

__all__ = ["EnvIdxRequest", "StepRequest", "ResetRequest"]


class EnvIdxRequest(BaseModel):
    """Body naming one session: `{"env_idx": int}` (POST /close, ...)."""

    model_config = ConfigDict(extra="ignore")
    env_idx: StrictInt


class StepRequest(EnvIdxRequest):
    """POST /step body: `{"env_idx": int, "action": str}`."""

    action: StrictStr


class ResetRequest(EnvIdxRequest):
    """POST /reset body (WebShop): `{"env_idx": int, "session_id": int | null}`."""

    session_id: Optional[StrictInt] = None
