"""WebArena's evaluators: how a finished trajectory is scored against a task config.

Owns the scoring rules of WebArena's `evaluation_harness/evaluators.py`, re-implemented on the
async Playwright API, quirks included (the deliberate differences are listed below):

- `StringEvaluator` (`string_match`): the stop action's answer against `reference_answers`:
  `exact_match` (cleaned equality), `must_include` (cleaned substring; a lone one-character
  reference must be a whole token; " |OR| " is *not* split), `fuzzy_match` (LLM judge; an
  exact cleaned agreement scores 1 without one, and no judge is asked once the score is 0), and
  `fuzzy_match: "N/A"` (exact "N/A", else the judge's `ua_match`, whose result *replaces* the score).
- `URLEvaluator` (`url_match`): rule "GOLD in PRED" on the agent page's URL.
- `HTMLContentEvaluator` (`program_html`): reads page content, a JS expression or a `func:`
  helper on the agent's page (`url: "last"`) or on a URL opened in a NEW tab of the same context
  (closed afterwards, so the agent's page never moves), and checks `required_contents`.
- `EvaluatorComb`: the product of its evaluators' scores; `evaluator_router` builds one.

Differences from WebArena, on purpose: a target URL is awaited until "load" (optionally network
idle) instead of a fixed 3 s sleep; `func:` strings are parsed against a whitelist, never
`eval`ed; `url: "last"` and `__last_url__` always mean the agent's page (in WebArena, a target
after a URL target sees the page that target navigated to); a URL helper that finds nothing
(e.g. no order yet) scores the target 0 instead of crashing.

It does not run the browser or decide when to evaluate (the env does) and does not own the
judge prompts (`judge.py`) or the helpers (`helper_functions.py`).
"""
from __future__ import annotations

import abc
import html
import logging
import re
from typing import Any, Mapping, Sequence
from urllib.parse import parse_qs, urlparse

from agentenv_webarena.tasks.config import EVAL_TYPES, load_task_config
from agentenv_webarena.webarena.evaluation_harness.helper_functions import HelperContext, call_helper
from agentenv_webarena.webarena.evaluation_harness.judge import LLMJudge, NeedsJudge

__all__ = [
    "EvaluationError",
    "Evaluator",
    "EvaluatorComb",
    "HTMLContentEvaluator",
    "StringEvaluator",
    "URLEvaluator",
    "evaluator_router",
    "judge_calls",
    "word_tokenize",
]

logger = logging.getLogger(__name__)

OR_SEPARATOR = " |OR| "
_URL_RULE = "GOLD in PRED"

# Numbers keep their inner "." and "," (6.5, 1,000), words their inner hyphens and apostrophes;
# every other non-space character is a token of its own ("$", ".", ","). Close enough to
# nltk.word_tokenize for the one rule that uses it: is a one-character reference a whole token?
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+(?:[-'’]\w+)*|[^\w\s]")


def word_tokenize(text: str) -> list[str]:
    """Split `text` into word, number and punctuation tokens ("$6." -> ["$", "6", "."])."""
    return _TOKEN.findall(text)


class EvaluationError(RuntimeError):
    """A target could not be evaluated for a reason that is not the agent's: navigation failed."""


class Evaluator(abc.ABC):
    """Base class: an awaitable scorer of a finished trajectory.

    Subclasses implement `__call__(trajectory, config_file, page, client=None) -> float`.

    Args:
        eval_tag: a label for logs.
    """

    def __init__(self, eval_tag: str = ""):
        self.eval_tag = eval_tag

    @abc.abstractmethod
    async def __call__(
        self,
        trajectory: Sequence[Any],
        config_file: str | dict,
        page: Any,
        client: Any = None,
    ) -> float:
        """Score the trajectory in [0, 1]."""

    @staticmethod
    def get_last_action(trajectory: Sequence[Any]) -> Any:
        """The trajectory's last element, which must be an action carrying an answer.

        Raises:
            ValueError: the trajectory is empty or does not end with an action.
        """
        if not trajectory:
            raise ValueError("the trajectory is empty; append a stop action (e.g. {'answer': ''}) before evaluating")
        last = trajectory[-1]
        if isinstance(last, Mapping) and "answer" in last:
            return last
        if hasattr(last, "answer"):
            return last
        raise ValueError(
            f"the trajectory must end with the stop action (a dict with 'answer' or an Action), "
            f"got {type(last).__name__}; append create_stop_action('') if the episode ended otherwise"
        )

    @classmethod
    def get_last_answer(cls, trajectory: Sequence[Any]) -> str:
        """The stop action's answer text."""
        last = cls.get_last_action(trajectory)
        answer = last["answer"] if isinstance(last, Mapping) else last.answer
        return "" if answer is None else str(answer)


class StringEvaluator(Evaluator):
    """`string_match`: the stop answer against `eval.reference_answers` (WebArena's rules).

    Args:
        judge: grader for `fuzzy_match` and N/A reasons; None raises `NeedsJudge` when one is needed.
    """

    def __init__(self, judge: LLMJudge | None = None, eval_tag: str = "string_match"):
        super().__init__(eval_tag)
        self.judge = judge

    @staticmethod
    def clean_answer(answer: str) -> str:
        """Strip, drop one pair of surrounding quotes ('...' or "..."), lowercase."""
        answer = answer.strip()
        if answer.startswith("'") and answer.endswith("'"):
            answer = answer[1:-1]
        elif answer.startswith('"') and answer.endswith('"'):
            answer = answer[1:-1]
        return answer.lower()

    @classmethod
    def exact_match(cls, ref: str, pred: str) -> float:
        """1.0 if the cleaned strings are equal."""
        return float(cls.clean_answer(pred) == cls.clean_answer(ref))

    @classmethod
    def must_include(cls, ref: str, pred: str, tokenize: bool = False) -> float:
        """1.0 if cleaned `ref` is a substring of cleaned `pred`.

        With `tokenize` and a one-character cleaned `ref`, it must be a whole token of `pred`
        instead ("6" is in "6 items", not in "16 items").
        """
        clean_ref = cls.clean_answer(ref)
        clean_pred = cls.clean_answer(pred)
        if tokenize and len(clean_ref) == 1 and len(word_tokenize(clean_ref)) == 1:
            return float(clean_ref in word_tokenize(clean_pred))
        return float(clean_ref in clean_pred)

    async def fuzzy_match(self, ref: str, pred: str, intent: str) -> float:
        """1.0 if `pred` means `ref`: cleaned equality short-cuts, otherwise the judge decides.

        Raises:
            NeedsJudge: the strings differ and no judge is configured.
            JudgeError: the judge failed.
        """
        if self.clean_answer(pred) == self.clean_answer(ref):
            return 1.0
        if self.judge is None:
            raise NeedsJudge(
                f"fuzzy_match of {pred!r} against {ref!r} needs an LLM judge; start the server with "
                f"--judge-base-url (or set WEBARENA_JUDGE_BASE_URL), or pass judge= to evaluator_router"
            )
        return await self.judge.fuzzy_match(pred=pred, reference=ref, question=intent)

    async def ua_match(self, ref: str, pred: str, intent: str) -> float:
        """1.0 if the reported unachievable reason `pred` agrees with `ref` (judge only).

        Raises:
            NeedsJudge: no judge is configured.
            JudgeError: the judge failed.
        """
        if self.judge is None:
            raise NeedsJudge(
                f"the N/A task's answer {pred!r} is not 'N/A', so ua_match needs an LLM judge; start the server "
                f"with --judge-base-url (or set WEBARENA_JUDGE_BASE_URL), or pass judge= to evaluator_router"
            )
        return await self.judge.ua_match(pred=pred, reference=ref, question=intent)

    async def __call__(
        self,
        trajectory: Sequence[Any],
        config_file: str | dict,
        page: Any = None,
        client: Any = None,
    ) -> float:
        configs = load_task_config(config_file)
        pred = self.clean_answer(self.get_last_answer(trajectory))
        score = 1.0
        for approach, value in configs["eval"]["reference_answers"].items():
            if approach == "exact_match":
                score *= self.exact_match(ref=value, pred=pred)
            elif approach == "must_include":
                if not isinstance(value, list):
                    raise ValueError(f"reference_answers.must_include must be a list, got {value!r}")
                for must in value:
                    score *= self.must_include(ref=must, pred=pred, tokenize=(len(value) == 1))
            elif approach == "fuzzy_match":
                intent = configs["intent"]
                if value == "N/A":
                    score *= self.exact_match(ref="N/A", pred=pred)
                    if score != 1:
                        # WebArena overwrites (not multiplies) the score with the reason check.
                        reason = configs["eval"].get("string_note") or ""
                        score = await self.ua_match(ref=reason, pred=pred, intent=intent)
                else:
                    if not isinstance(value, list):
                        raise ValueError(f"reference_answers.fuzzy_match must be a list or 'N/A', got {value!r}")
                    for reference in value:
                        if score == 0:  # the product is 0 whatever the judge says: ask no more
                            break
                        score *= await self.fuzzy_match(ref=reference, pred=pred, intent=intent)
            else:
                raise ValueError(
                    f"reference_answers has {approach!r}; choose from exact_match, must_include, fuzzy_match"
                )
        logger.debug("string_match task %s: answer %r -> %s", configs.get("task_id"), pred, score)
        return score


def _clean_url(url: str) -> str:
    return str(url).rstrip("/")


def _base_and_query(url: str) -> tuple[str, dict[str, list[str]]]:
    parsed = urlparse(url)
    return parsed.netloc + parsed.path, parse_qs(parsed.query)


class URLEvaluator(Evaluator):
    """`url_match`: rule "GOLD in PRED" on the agent page's URL (WebArena's rule).

    The score is 1 when (a) some reference's netloc+path is a substring of the page's
    netloc+path, and (b) for every query key of any reference (keys and values pooled across the
    " |OR| " alternatives), the page's query has at least one of that key's reference values.
    Trailing "/" is dropped; query keys only the page has are ignored.
    """

    def __init__(self, eval_tag: str = "url_match"):
        super().__init__(eval_tag)

    @staticmethod
    def match(reference_url: str, pred_url: str) -> float:
        """Score `pred_url` against `reference_url` (alternatives joined by " |OR| ")."""
        pred_base, pred_query = _base_and_query(_clean_url(pred_url))
        ref_bases = []
        ref_query: dict[str, set[str]] = {}
        for ref in reference_url.split(OR_SEPARATOR):
            base, query = _base_and_query(_clean_url(ref))
            ref_bases.append(base)
            for key, values in query.items():
                ref_query.setdefault(key, set()).update(values)
        base_score = float(any(base in pred_base for base in ref_bases))
        query_score = 1.0
        for key, values in ref_query.items():
            query_score *= float(any(value in pred_query.get(key, []) for value in values))
        return base_score * query_score

    async def __call__(
        self,
        trajectory: Sequence[Any],
        config_file: str | dict,
        page: Any,
        client: Any = None,
    ) -> float:
        configs = load_task_config(config_file)
        rule = configs["eval"].get("url_note") or _URL_RULE
        if rule != _URL_RULE:
            raise ValueError(f"eval.url_note {rule!r} is not supported; the only rule is {_URL_RULE!r}")
        score = self.match(configs["eval"]["reference_url"], page.url)
        logger.debug("url_match task %s: %s -> %s", configs.get("task_id"), page.url, score)
        return score


class HTMLContentEvaluator(Evaluator):
    """`program_html`: check page content at each target of `eval.program_html`.

    Args:
        site_urls: site key -> base URL for `func:` helpers; None reads the environment.
        navigation_timeout_ms: cap on opening a target URL.
        idle_timeout_ms: after "load", also wait up to this long for network idle (0 = don't).
            Pages that render client-side after load (GitLab's Vue tables) want ~3000.
    """

    def __init__(
        self,
        site_urls: Mapping[str, str] | None = None,
        navigation_timeout_ms: int = 30_000,
        idle_timeout_ms: int = 0,
        eval_tag: str = "program_html",
    ):
        super().__init__(eval_tag)
        self.site_urls = site_urls
        self.navigation_timeout_ms = navigation_timeout_ms
        self.idle_timeout_ms = idle_timeout_ms

    async def __call__(
        self,
        trajectory: Sequence[Any],
        config_file: str | dict,
        page: Any,
        client: Any = None,
    ) -> float:
        configs = load_task_config(config_file)
        score = 1.0
        for i, target in enumerate(configs["eval"]["program_html"]):
            target_score = await self._score_target(target, page)
            logger.debug("program_html task %s target %d -> %s", configs.get("task_id"), i, target_score)
            score *= target_score
        return score

    async def _score_target(self, target: Mapping[str, Any], page: Any) -> float:
        url_spec = target["url"]
        if url_spec.startswith("func:"):
            target_url = await call_helper(url_spec, HelperContext(page, self.site_urls), last_url=page.url)
            if not target_url:
                logger.info("program_html: %s found no URL; the target scores 0", url_spec)
                return 0.0
        else:
            target_url = url_spec
        if target_url == "last":
            return await self._check(target, page)
        tab = await page.context.new_page()
        try:
            await self._open(tab, target_url)
            return await self._check(target, tab)
        finally:
            await tab.close()

    async def _open(self, tab: Any, url: str) -> None:
        try:
            await tab.goto(url, wait_until="load", timeout=self.navigation_timeout_ms)
        except Exception as e:
            raise EvaluationError(f"program_html could not open target URL {url!r}: {e}") from e
        if self.idle_timeout_ms > 0:
            try:
                await tab.wait_for_load_state("networkidle", timeout=self.idle_timeout_ms)
            except Exception:  # idle is best effort; "load" already happened
                logger.debug("program_html: %s not network-idle within %d ms", url, self.idle_timeout_ms)

    async def _select(self, target: Mapping[str, Any], page: Any) -> str:
        locator = target["locator"]
        if not locator.strip():
            return await page.content()
        if locator.startswith("document.") or locator.startswith("[...document."):
            # WebArena runs them under one try: a failing prep action skips the rest, silently.
            try:
                for prep in target.get("prep_actions") or []:
                    await page.evaluate(f"() => {prep}")
            except Exception as e:
                logger.debug("program_html prep action failed, skipping the rest: %r", e)
            try:
                value = await page.evaluate(f"() => {locator}")
            except Exception as e:  # a missing element scores as empty content
                logger.debug("program_html locator %r failed: %r", locator, e)
                return ""
            # WebArena applies Python's str() to the JS result: a list reads "['a', 'b']", null "None".
            return str(value)
        if locator.startswith("func:"):
            return await call_helper(locator, HelperContext(page, self.site_urls), last_url=page.url)
        raise ValueError(
            f"program_html locator {locator!r} is not supported; use '' (page HTML), a JS expression "
            f"starting with 'document.' or '[...document.', or 'func:helper(...)'"
        )

    async def _check(self, target: Mapping[str, Any], page: Any) -> float:
        selected = html.unescape(await self._select(target, page))
        required = target["required_contents"]
        if "exact_match" in required:
            return StringEvaluator.exact_match(ref=required["exact_match"], pred=selected)
        if "must_include" in required:
            score = 1.0
            for content in required["must_include"]:
                alternatives = content.split(OR_SEPARATOR)
                score *= float(
                    any(StringEvaluator.must_include(ref=alt, pred=selected, tokenize=False) for alt in alternatives)
                )
            return score
        raise ValueError(f"program_html required_contents {dict(required)!r} needs exact_match or must_include")


class EvaluatorComb(Evaluator):
    """The product of several evaluators' scores (WebArena combines eval_types this way)."""

    def __init__(self, evaluators: Sequence[Evaluator]):
        super().__init__("+".join(e.eval_tag for e in evaluators))
        self.evaluators = list(evaluators)

    async def __call__(
        self,
        trajectory: Sequence[Any],
        config_file: str | dict,
        page: Any,
        client: Any = None,
    ) -> float:
        score = 1.0
        for evaluator in self.evaluators:
            score *= await evaluator(trajectory, config_file, page, client)
        return score


def judge_calls(config_file: str | dict) -> int:
    """At most how many judge requests scoring this task can make (0: it never needs a judge).

    One per `fuzzy_match` reference, one for an N/A task's reason check; callers size their
    evaluation timeout with it (`timeout_s` per request).
    """
    configs = load_task_config(config_file)
    if "string_match" not in configs["eval"]["eval_types"]:
        return 0
    fuzzy = (configs["eval"].get("reference_answers") or {}).get("fuzzy_match")
    if fuzzy is None:
        return 0
    return 1 if fuzzy == "N/A" else len(fuzzy)


def evaluator_router(
    config_file: str | dict,
    judge: LLMJudge | None = None,
    *,
    site_urls: Mapping[str, str] | None = None,
    navigation_timeout_ms: int = 30_000,
    idle_timeout_ms: int = 0,
) -> EvaluatorComb:
    """Build the evaluator for a task: one per `eval.eval_types` entry, in order, multiplied.

    Args:
        config_file: a `{i}.json` path or the task config dict (URLs already substituted).
        judge: LLM grader for fuzzy_match / N/A reasons; None raises `NeedsJudge` when needed.
        site_urls: site key -> base URL for `func:` helpers; None reads the environment.
        navigation_timeout_ms: cap on opening a program_html target URL.
        idle_timeout_ms: extra wait for network idle after a target loads (0 = none).

    Returns:
        An `EvaluatorComb`; `await evaluator(trajectory, config_file, page)` gives the score.

    Raises:
        ValueError: an unknown eval type (the message lists the supported ones).
    """
    configs = load_task_config(config_file)
    evaluators: list[Evaluator] = []
    for eval_type in configs["eval"]["eval_types"]:
        if eval_type == "string_match":
            evaluators.append(StringEvaluator(judge=judge))
        elif eval_type == "url_match":
            evaluators.append(URLEvaluator())
        elif eval_type == "program_html":
            evaluators.append(
                HTMLContentEvaluator(
                    site_urls=site_urls,
                    navigation_timeout_ms=navigation_timeout_ms,
                    idle_timeout_ms=idle_timeout_ms,
                )
            )
        else:
            raise ValueError(f"eval_types entry {eval_type!r} is not supported; choose from {list(EVAL_TYPES)}")
    return EvaluatorComb(evaluators)
