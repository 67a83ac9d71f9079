"""`LLMJudge`: the language-model grader behind WebArena's `fuzzy_match` and `ua_match`.

Owns the two grading prompts (is a free-form answer semantically the reference? does a reported
"unachievable" reason agree with the real one?), the call to an OpenAI-compatible
`/chat/completions` endpoint over httpx, and the parsing of the verdict. WebArena grades with
gpt-4-1106-preview at temperature 0; any compatible server (OpenAI, vLLM, a local proxy) works.

Verdicts are cached in process: one bounded LRU map per `LLMJudge` (`cache_size` entries, 4,096 by
default; the oldest verdict goes first), keyed by (check, question, reference, answer), so an answer
the policy gives again is not sent again. Only verdicts are cached, never failures. The cache lives
as long as the judge (one per server process or run) and is not shared between processes.

It does not decide *when* a judge is needed: `StringEvaluator` short-cuts exact agreements and
raises `NeedsJudge` when a task needs a judge and none is configured; the env turns `NeedsJudge`
and `JudgeError` (timeout, HTTP error, no verdict) into `eval_status == "needs_judge"`.

Configuration (`judge_from_settings`: the launch / run CLI flags, else `LLMJudge.from_env`):

| flag | variable | fallback | meaning |
|---|---|---|---|
| `--judge-base-url` | `WEBARENA_JUDGE_BASE_URL` | `OPENAI_BASE_URL`, else `https://api.openai.com/v1` | endpoint root |
| `--judge-api-key` | `WEBARENA_JUDGE_API_KEY` | `OPENAI_API_KEY` | bearer token (empty for local servers) |
| `--judge-model` | `WEBARENA_JUDGE_MODEL` | `gpt-4-1106-preview` | model name sent in the request |
| `--judge-timeout-s` | `WEBARENA_JUDGE_TIMEOUT_S` | `60` | bound on one request, in seconds |

Without a flag, with neither a base URL nor an API key set, there is no judge (`from_env` returns None).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Mapping, Optional

import httpx

__all__ = ["DEFAULT_JUDGE_MODEL", "JudgeError", "LLMJudge", "NeedsJudge", "judge_from_settings"]

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

    Start the server with `--judge-base-url` (or set `WEBARENA_JUDGE_BASE_URL`), or pass an
    `LLMJudge` to `evaluator_router(..., judge=...)`.
    """


class JudgeError(RuntimeError):
    """The judge endpoint failed: timeout, HTTP error, malformed reply, or no verdict in it."""


class _VerdictCache:
    """A bounded, thread-safe LRU map of judge verdicts: (check, question, reference, answer) -> score."""

    def __init__(self, size: int):
        self.size = size
        self._data: OrderedDict[tuple, float] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple) -> Optional[float]:
        with self._lock:
            score = self._data.get(key)
            if score is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return score

    def put(self, key: tuple, score: float) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._data[key] = score
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


@dataclass(frozen=True)
class LLMJudge:
    """A client for one OpenAI-compatible chat endpoint, used as WebArena's LLM grader.

    Attributes:
        base_url: endpoint root; requests go to `{base_url}/chat/completions`.
        api_key: bearer token; empty sends no Authorization header.
        model: model name sent with every request.
        timeout_s: bound on one request (connect, send, wait and read together) in seconds.
        max_tokens: cap on the judge's reply length.
        cache_size: verdicts kept in the in-process LRU cache (0 = no cache).
    """

    base_url: str
    api_key: str = field(default="", repr=False)  # kept out of logs
    model: str = DEFAULT_JUDGE_MODEL
    timeout_s: float = 60.0
    max_tokens: int = 768
    cache_size: int = 4096
    cache: _VerdictCache = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"LLMJudge.base_url must be an http(s) URL, got {self.base_url!r}")
        if self.timeout_s <= 0:
            raise ValueError(f"LLMJudge.timeout_s must be > 0, got {self.timeout_s}")
        if self.cache_size < 0:
            raise ValueError(f"LLMJudge.cache_size must be >= 0, got {self.cache_size}")
        object.__setattr__(self, "cache", _VerdictCache(self.cache_size))

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
                # httpx bounds each phase; wait_for bounds the whole request (a server that trickles bytes)
                response = await asyncio.wait_for(client.post(url, json=body, headers=headers), self.timeout_s)
        except (httpx.TimeoutException, asyncio.TimeoutError) as e:
            raise JudgeError(
                f"judge {url} did not answer within {self.timeout_s} s; raise --judge-timeout-s "
                f"(WEBARENA_JUDGE_TIMEOUT_S) or check the server"
            ) from e
        except httpx.HTTPError as e:
            raise JudgeError(f"judge {url} could not be reached: {e!r}; check --judge-base-url") from e
        if response.status_code >= 400:
            raise JudgeError(
                f"judge {url} answered HTTP {response.status_code}: {response.text[:300]!r}; "
                f"check --judge-api-key and --judge-model={self.model!r}"
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
        key = ("fuzzy_match", question, reference, pred)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        reply = await self.complete(_FUZZY_PROMPT.format(question=question, reference=reference, pred=pred))
        verdict = reply.lower()
        if "partially correct" in verdict or "incorrect" in verdict:
            score = 0.0
        elif "correct" in verdict:
            score = 1.0
        else:
            raise JudgeError(f"judge reply has no correct/incorrect verdict: {reply[:300]!r}")
        self.cache.put(key, score)
        return score

    async def ua_match(self, pred: str, reference: str, question: str) -> float:
        """Grade a reported unachievable reason `pred` against the real one `reference`.

        WebArena's rule: a reply containing "different" scores 0; otherwise it must contain
        "same" and scores 1.

        Raises:
            JudgeError: the request failed or the reply holds neither "same" nor "different".
        """
        key = ("ua_match", question, reference, pred)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        reply = await self.complete(_UA_PROMPT.format(question=question, reference=reference, pred=pred))
        verdict = reply.lower()
        if "different" in verdict:
            score = 0.0
        elif "same" in verdict:
            score = 1.0
        else:
            raise JudgeError(f"judge reply has no same/different verdict: {reply[:300]!r}")
        self.cache.put(key, score)
        return score


def judge_from_settings(base_url: Optional[str] = None, model: Optional[str] = None, api_key: Optional[str] = None,
                        timeout_s: Optional[float] = None,
                        environ: Optional[Mapping[str, str]] = None) -> Optional[LLMJudge]:
    """The judge of the launch / run CLI flags: each flag given wins over its environment variable.

    With `base_url`, the judge is that endpoint (key, model and timeout from the other flags, else the
    environment, see the module docstring); without it, `LLMJudge.from_env` decides, and the other
    flags still override what it found. None means no judge: tasks that need one report `needs_judge`.

    Raises:
        ValueError: a bad URL or a timeout that is not a positive number (the message names the flag).
    """
    env = os.environ if environ is None else environ
    if timeout_s is not None and timeout_s <= 0:
        raise ValueError(f"--judge-timeout-s must be > 0, got {timeout_s}")
    if base_url:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"--judge-base-url must be an http(s) URL such as http://127.0.0.1:8000/v1, "
                             f"got {base_url!r}")
        # the timeout, the key and the model as the environment gives them, then the flags on top
        judge = LLMJudge.from_env({**env, "WEBARENA_JUDGE_BASE_URL": base_url})
    else:
        judge = LLMJudge.from_env(env)
        if judge is None:
            return None
    overrides = {k: v for k, v in (("api_key", api_key), ("model", model), ("timeout_s", timeout_s)) if v}
    return dataclasses.replace(judge, **overrides) if overrides else judge
