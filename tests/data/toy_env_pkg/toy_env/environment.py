"""Step 1: the environment, one `Session` per env_idx (agentenv.server.session)."""
from __future__ import annotations

import re
from typing import Optional

from agentenv.server import ResetResult, StepResult
from toy_env import WORDS

_SAY = re.compile(r"say\[(.*?)\]")


class EchoSession:
    """Say the word shown; three turns at most."""

    def __init__(self, words=WORDS, max_turns: int = 3):
        self.words, self.max_turns = words, max_turns
        self.word: Optional[str] = None
        self.turns = 0
        self.text = "No item yet: reset first."

    def reset(self, idx: Optional[int]) -> ResetResult:
        if idx is None or not 0 <= idx < len(self.words):
            raise ValueError(f"item {idx} is out of range 0..{len(self.words) - 1}")
        self.word, self.turns = self.words[idx], 0
        self.text = f"Say the word: {self.word}"
        return ResetResult(observation=self.text)

    def step(self, action: str) -> StepResult:
        match = _SAY.search(action)
        if self.word is None or match is None:
            return StepResult(f"Invalid action: write say[<word>]. {self.text}", 0.0, False, info={"valid": False})
        self.turns += 1
        if match.group(1).strip().lower() == self.word:
            return StepResult("Correct.", 1.0, True)
        self.text = f"Wrong, try again. Say the word: {self.word}"
        return StepResult(self.text, 0.0, False, truncated=self.turns >= self.max_turns)

    def observe(self) -> str:
        return self.text

    def close(self) -> None:
        self.word = None
