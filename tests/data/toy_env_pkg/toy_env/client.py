"""Step 4: the client the trainer's agent loop talks through (agentenv.controller.HttpEnvClient)."""
from __future__ import annotations

from agentenv.controller import HttpEnvClient, ResetResult, StepResult


class ToyEnvClient(HttpEnvClient):
    env_label = "toy"
    conversation_start = (
        {"from": "human", "loss": None, "value": "Repeat the word you are shown. Reply with say[<word>]."},
        {"from": "gpt", "loss": False, "value": "Ok."},
    )

    def __init__(self, env_server_base: str, data_len: int = 0, *args, timeout: float = 30, **kwargs):
        super().__init__(env_server_base, data_len, timeout=timeout)

    def observe(self) -> str:
        return self._get("observation")

    def reset(self, idx: int) -> ResetResult:
        result = self._reset_recreating(lambda: self._post("reset", {"idx": idx}))
        return ResetResult(observation=result["observation"])

    def step(self, action: str) -> StepResult:
        r = self._post("step", {"action": action})
        return StepResult(r["observation"], float(r["reward"]), bool(r["terminated"]), bool(r["truncated"]), r["info"])
