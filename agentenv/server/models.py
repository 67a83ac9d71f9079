"""Request models with AgentGym's field names, shared by the env servers.

Fields are strict: `env_idx` must be a JSON integer and `action` a JSON string, so a wrong type
gets a 422 JSON error naming the field instead of being silently coerced; an action with lone
UTF-16 surrogates (valid JSON, invalid Unicode) is refused the same way.
"""
from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, field_validator

__all__ = ["EnvIdxRequest", "StepRequest", "ResetRequest"]


class EnvIdxRequest(BaseModel):
    """Body naming one session: `{"env_idx": int}` (POST /close, ...)."""

    model_config = ConfigDict(extra="ignore")
    env_idx: StrictInt


class StepRequest(EnvIdxRequest):
    """POST /step body: `{"env_idx": int, "action": str}`."""

    action: StrictStr

    @field_validator("action")
    @classmethod
    def _valid_unicode(cls, value: str) -> str:
        # JSON may smuggle lone UTF-16 surrogates ("\ud800") that no UTF-8 page or URL can hold.
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"action contains a lone UTF-16 surrogate at position {exc.start}; "
                             "send valid Unicode text") from None
        return value


class ResetRequest(EnvIdxRequest):
    """POST /reset body (WebShop): `{"env_idx": int, "session_id": int | null}`."""

    session_id: Optional[StrictInt] = None
