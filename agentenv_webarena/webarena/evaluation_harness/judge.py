"""`LLMJudge`: the language-model grader behind WebArena's `fuzzy_match` and `ua_match`.

Owns the two grading prompts (is a free-form answer semantically the reference? does a reported
"unachievable" reason agree with the real one?), the call to an OpenAI-compatible
`/chat/completions` endpoint over httpx, and the parsing of the verdict. WebArena grades with
gpt-4-1106-preview at temperature 0; any compatible server (OpenAI, vLLM, a local proxy) works.

It does not decide *when* a judge is needed: `StringEvaluator` short-cuts exact agreements and
raises `NeedsJudge` when a task needs a judge and none is configured.

Configuration (`LLMJudge.from_env`):

| variable | fallback | meaning |
|---|---|---|
| `WEBARENA_JUDGE_BASE_URL` | `OPENAI_BASE_URL`, else `https://api.openai.com/v1` | endpoint root (".../v1") |
| `WEBARENA_JUDGE_API_KEY` | `OPENAI_API_KEY` | bearer token (may be empty for local servers) |
| `WEBARENA_JUDGE_MODEL` | `gpt-4-1106-preview` | model name sent in the request |
| `WEBARENA_JUDGE_TIMEOUT_S` | `60` | per-request timeout in seconds |

With neither a base URL nor an API key set, there is no judge (`from_env` returns None).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Mapping

import httpx

__all__ = ["DEFAULT_JUDGE_MODEL", "JudgeError", "LLMJudge", "NeedsJudge"]

logger = logging.getLogger(__name__)

DEFAULT_JUDGE_MODEL = "gpt-4-1106-preview"
_OPENAI_BASE_URL = "https://api.openai.com/v1"

_SYSTEM_PROMPT = "You are a careful and impartial grader."

# Our own wording of WebArena's grading instructions; the verdict words are the same
# ("correct" / "incorrect" / "partially correct", and "same" / "different") because the parsing
# rules below (taken from WebArena) look for them.
_FUZZY_PROMPT = (
    "You are helping a teacher grade a student's answer to a question. The student may phrase "
    "the answer differently from the reference; what matters is whether it means the same "
    "thing as the reference answer.\n"
    "question: {question}\n"
    "reference answer: {reference}\n"
    "all string comparisons are case-insensitive. If the reference answer is \"N/A\", the "
    "student is correct only if they also say \"N/A\" (or an equivalent statement that the "
    "task cannot be done).\n"
    "student answer: {pred}\n"
    "Finish your reply with exactly one verdict: correct, incorrect, or partially correct."
)
_UA_PROMPT = (
    "A task was given to an agent, and the task cannot be completed. The agent stopped and "
    "reported why it believes the task cannot be completed.\n"
    "task: {question}\n"
    "actual reason the task cannot be completed: {reference}\n"
    "reason reported by the agent: {pred}\n"
    "Decide whether the reported reason agrees with the actual reason, even if it says so only "
    "implicitly. Answer 'same' if it agrees, otherwise answer 'different'."
)


class NeedsJudge(Exception):
    """A `fuzzy_match` or `ua_match` item must be graded by an LLM judge and none is configured.

    Set `WEBARENA_JUDGE_BASE_URL` (and `WEBARENA_JUDGE_API_KEY`, `WEBARENA_JUDGE_MODEL`), or pass
    an `LLMJudge` to `evaluator_router(..., judge=...)`.
    """


class JudgeError(RuntimeError):
    """The judge endpoint failed: timeout, HTTP error, malformed reply, or no verdict in it."""


@dataclass(frozen=True)
class LLMJudge:
    """A client for one OpenAI-compatible chat endpoint, used as WebArena's LLM grader.

    Attributes:
        base_url: endpoint root; requests go to `{base_url}/chat/completions`.
        api_key: bearer token; empty sends no Authorization header.
        model: model name sent with every request.
        timeout_s: per-request timeout (connect + read) in seconds.
        max_tokens: cap on the judge's reply length.
    """

    base_url: str
    api_key: str = ""
    model: str = DEFAULT_JUDGE_MODEL
    timeout_s: float = 60.0
    max_tokens: int = 768

    def __post_init__(self):
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"LLMJudge.base_url must be an http(s) URL, got {self.base_url!r}")
        if self.timeout_s <= 0:
            raise ValueError(f"LLMJudge.timeout_s must be > 0, got {self.timeout_s}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "LLMJudge | None":
        """Build a judge from the environment (see the module docstring), or None if unconfigured.

        Returns None when neither a base URL nor an API key is set.

        Raises:
            ValueError: `WEBARENA_JUDGE_TIMEOUT_S` is not a positive number.
        """
        env = os.environ if environ is None else environ
        base_url = env.get("WEBARENA_JUDGE_BASE_URL") or env.get("OPENAI_BASE_URL") or ""
        api_key = env.get("WEBARENA_JUDGE_API_KEY") or env.get("OPENAI_API_KEY") or ""
        if not base_url and not api_key:
            return None
        raw_timeout = env.get("WEBARENA_JUDGE_TIMEOUT_S") or "60"
        try:
            timeout_s = float(raw_timeout)
        except ValueError as e:
            raise ValueError(
                f"WEBARENA_JUDGE_TIMEOUT_S={raw_timeout!r} is not a number; set it to seconds, e.g. 60"
            ) from e
        return cls(
            base_url=(base_url or _OPENAI_BASE_URL).rstrip("/"),
            api_key=api_key,
            model=env.get("WEBARENA_JUDGE_MODEL") or DEFAULT_JUDGE_MODEL,
            timeout_s=timeout_s,
        )

    async def complete(self, prompt: str) -> str:
        """Send one user prompt (temperature 0) and return the reply text.

        Raises:
            JudgeError: timeout, connection failure, non-2xx status, or a reply without
                `choices[0].message.content`.
        """
        url = f"{self.base_url.rstrip('/')}/chat/completions"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": _SYSTEM_PROMPT},
                {"role": "user", "content": prompt},
            ],
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                response = await client.post(url, json=body, headers=headers)
        except httpx.TimeoutException as e:
            raise JudgeError(
                f"judge {url} did not answer within {self.timeout_s} s; raise "
                f"WEBARENA_JUDGE_TIMEOUT_S or check the server"
            ) from e
        except httpx.HTTPError as e:
            raise JudgeError(f"judge {url} could not be reached: {e!r}; check WEBARENA_JUDGE_BASE_URL") from e
        if response.status_code >= 400:
            raise JudgeError(
                f"judge {url} answered HTTP {response.status_code}: {response.text[:300]!r}; "
                f"check WEBARENA_JUDGE_API_KEY and WEBARENA_JUDGE_MODEL={self.model!r}"
            )
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise JudgeError(
                f"judge {url} sent a reply without choices[0].message.content: {response.text[:300]!r}"
            ) from e
        if not isinstance(content, str):
            raise JudgeError(f"judge {url} sent non-text content {content!r}")
        logger.debug("judge %s replied %r", self.model, content[:200])
        return content

    async def fuzzy_match(self, pred: str, reference: str, question: str) -> float:
        """Grade `pred` against `reference` for `question`: 1.0 if "correct", else 0.0.

        WebArena's rule: a reply containing "partially correct" or "incorrect" scores 0; otherwise
        it must contain "correct" and scores 1.

        Raises:
            JudgeError: the request failed or the reply holds none of the verdict words.
        """
        reply = await self.complete(_FUZZY_PROMPT.format(question=question, reference=reference, pred=pred))
        verdict = reply.lower()
        if "partially correct" in verdict or "incorrect" in verdict:
            return 0.0
        if "correct" in verdict:
            return 1.0
        raise JudgeError(f"judge reply has no correct/incorrect verdict: {reply[:300]!r}")

    async def ua_match(self, pred: str, reference: str, question: str) -> float:
        """Grade a reported unachievable reason `pred` against the real one `reference`.

        WebArena's rule: a reply containing "different" scores 0; otherwise it must contain
        "same" and scores 1.

        Raises:
            JudgeError: the request failed or the reply holds neither "same" nor "different".
        """
        reply = await self.complete(_UA_PROMPT.format(question=question, reference=reference, pred=pred))
        verdict = reply.lower()
        if "different" in verdict:
            return 0.0
        if "same" in verdict:
            return 1.0
        raise JudgeError(f"judge reply has no same/different verdict: {reply[:300]!r}")
