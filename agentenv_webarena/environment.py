"""WebArena episodes: one `WebarenaWorld` per server process, one `WebarenaSession` per env.

Owns what an episode is: reset to a task (restore the embedded sites' state for this env, or on a real
deployment hold the task's sites when it changes state (`site_locks`), open a fresh browser context, log
in, open the start tabs), step with the agent's raw text (extract and
parse the action, execute it, apply WebArena's early stops), and score the episode with the task's
evaluators when it ends. It does not own the browser (`browser_env`), the scoring rules
(`evaluation_harness`), the task files (`tasks`) or HTTP (`server`).

`WebarenaSession` follows the server kit's `Session` contract: `reset` and `step` return typed
results (`ResetResult`, `StepResult`: observation, reward, terminated, truncated, info) whose
observation is always in WebArena's prompt layout (OBSERVATION / URL / OBJECTIVE / PREVIOUS ACTION);
the reward is 0 until the episode ends and then the evaluator's score. Unlike AgentGym:
- `stop [...]` is scored at once, without touching the browser;
- an unparseable action or an unknown element id gives an observation that says what was wrong;
- WebArena's early stops (max steps, repeated parse failures, repeated actions) end the episode
  with `truncated=True`, and the trajectory is scored with the early-stop answer, as `run.py` does;
- a task whose score needs the LLM judge while none is configured, or whose judge timed out or failed,
  reports `info["eval_status"] == "needs_judge"` (reward 0, the reason in `info["eval_error"]`), never a
  crash and never a silent 0: the trainer leaves such episodes out of the update.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import urlsplit

from agentenv.controller.types import ResetResult, StepResult
from agentenv_webarena.site_locks import Holder, SiteLocks
from agentenv_webarena.webarena.browser_env import ActionExecutionError, BrowserConfig, BrowserHost, BrowserSession
from agentenv_webarena.webarena.browser_env.actions import (
    Action,
    ActionParsingError,
    ActionTypes,
    create_stop_action,
    is_equivalent,
    parse_action,
)

__all__ = ["EnvConfig", "WebarenaWorld", "WebarenaSession", "URL_MAPPINGS", "TaskIndexError", "EpisodeStateError",
           "StartPageError"]

logger = logging.getLogger(__name__)

# The public-looking names WebArena's prompts show for each site (run.py's URL_MAPPINGS).
URL_MAPPINGS = {
    "shopping_admin": "http://luma.com/admin",
    "shopping": "http://onestopmarket.com",
    "reddit": "http://reddit.com",
    "gitlab": "http://gitlab.com",
    "wikipedia": "http://wikipedia.org",
    "map": "http://openstreetmap.org",
    "homepage": "http://homepage.com",
}

_PARSE_HINT = (
    'The previous prediction you issued was "{text}". However, the format was incorrect: {error}. '
    "Ensure that the action is wrapped inside a pair of ``` and enclose arguments within [] as follows: "
    "```action [arg] ...```."
)


class TaskIndexError(ValueError):
    """A task index outside the loaded task list."""


class EpisodeStateError(RuntimeError):
    """A call that needs a reset first."""


class StartPageError(RuntimeError):
    """The task's start page could not be opened (a site is down or refuses the URL)."""


@dataclass
class EnvConfig:
    """Server-wide episode settings (the launch flags).

    Attributes:
        task_file: WebArena task JSON (a list) or a directory of `{i}.json` files.
        site_urls: site key -> base URL; empty means "start the embedded sites".
        embedded: True when the sites are ours (instance header, per-reset state restore, form login);
            detected at load time (our sites answer `GET /__control/health`).
        max_steps: WebArena's `max_steps` (30); the episode is truncated after that many actions.
        parsing_failure_th: consecutive unparseable actions that end the episode (3).
        repeating_action_failure_th: identical consecutive actions that end the episode (3).
        map_urls: show sites under WebArena's public names (http://onestopmarket.com, ...) in the
            observation and map them back in `goto` actions.
        call_timeout_s: bound on any one browser call (reset, action + observation, evaluation).
        auth_renew_before_s: real WebArena sites: a task's `storage_state` file is used only while
            none of its cookies expires within this many seconds; otherwise the reset logs the new
            context in itself and rewrites the file (AgentGym renews 2700 s before expiry).
        real_resets: real WebArena sites: the user declares that the deployment is reset between episodes,
            so state-changing tasks may run in parallel on one site (off: one at a time per site).
        site_lock_wait_s: real WebArena sites without `real_resets`: how long a state-changing reset waits
            for its sites before the 409 `site_busy` refusal (0: refuse at once).
        browser: Chromium settings.
    """

    task_file: str = ""
    site_urls: dict[str, str] = field(default_factory=dict)
    embedded: bool = True
    max_steps: int = 30
    parsing_failure_th: int = 3
    repeating_action_failure_th: int = 3
    map_urls: bool = True
    call_timeout_s: float = 60.0
    auth_renew_before_s: float = 2700.0
    real_resets: bool = False
    site_lock_wait_s: float = 0.0
    # WebArena's Chromium put no `url:` property on links; today's does (long, and not in WebArena's lines)
    browser: BrowserConfig = field(default_factory=lambda: BrowserConfig(extra_ignored_properties=("url",)))


class WebarenaWorld:
    """Everything one server process shares: tasks, site URLs, the embedded sites, the browser, the judge.

    Use `WebarenaWorld.load(config)`; `close()` stops the browser and the embedded sites.
    """

    def __init__(self, config: EnvConfig, tasks: list[dict], host: BrowserHost, sites: Any = None, judge: Any = None):
        self.config = config
        self.tasks = tasks
        self.host = host
        self.sites = sites
        self.judge = judge
        self.site_locks = SiteLocks(config.site_lock_wait_s)
        self._http = None
        self._http_lock = threading.Lock()

    @classmethod
    def load(cls, config: EnvConfig, judge: Any = None) -> "WebarenaWorld":
        """Load tasks, start the embedded sites when no site URL is configured, start Chromium."""
        from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks, site_urls_from_env

        config = dataclasses.replace(config, site_urls=dict(config.site_urls))
        if not config.task_file:
            config.task_file = EMBEDDED_TASK_FILE
        tasks = load_tasks(config.task_file)
        sites = None
        if not config.site_urls:
            config.site_urls = site_urls_from_env()
        if config.site_urls:
            from agentenv_webarena.sites import is_embedded_site

            config.embedded = is_embedded_site(next(iter(config.site_urls.values())))
        else:
            from agentenv_webarena.sites import EmbeddedSites

            sites = EmbeddedSites()
            config.site_urls = dict(sites.start())
            config.embedded = True
        hosts = tuple(sorted({urlsplit(u).netloc for u in config.site_urls.values()}))
        browser_config = dataclasses.replace(config.browser, allowed_hosts=config.browser.allowed_hosts or hosts)
        config.browser = browser_config
        host = BrowserHost(browser_config)
        try:
            host.start()
        except Exception:
            if sites is not None:
                sites.close()
            raise
        logger.info("WebArena world: %d tasks from %s; sites %s (%s); LLM judge: %s", len(tasks), config.task_file,
                    config.site_urls, "embedded" if config.embedded else "external",
                    f"{judge.model} at {judge.base_url}" if judge is not None
                    else "none (fuzzy_match / N/A-reason tasks report needs_judge; see --judge-base-url)")
        return cls(config, tasks, host, sites, judge)

    @property
    def num_tasks(self) -> int:
        return len(self.tasks)

    @property
    def guards_state(self) -> bool:
        """Whether state-changing episodes run one at a time per site: a real deployment, not declared reset
        between episodes."""
        return not self.config.embedded and not self.config.real_resets

    def http(self):
        """A shared httpx client for control calls to the embedded sites."""
        with self._http_lock:
            if self._http is None:
                import httpx

                self._http = httpx.Client(timeout=10.0)
            return self._http

    def to_display_url(self, url: str) -> str:
        """Replace a site's base URL by its WebArena public name (for the prompt)."""
        if not self.config.map_urls:
            return url
        for site, base in sorted(self.config.site_urls.items(), key=lambda kv: -len(kv[1])):
            public = URL_MAPPINGS.get(site)
            if public and url.startswith(base):
                return public + url[len(base):]
        return url

    def to_local_url(self, url: str) -> str:
        """Inverse of `to_display_url` (for `goto` actions written with public names)."""
        if not self.config.map_urls:
            return url
        for site, public in sorted(URL_MAPPINGS.items(), key=lambda kv: -len(kv[1])):
            base = self.config.site_urls.get(site)
            if base and url.startswith(public):
                return base + url[len(public):]
        return url

    def close(self) -> None:
        """Stop Chromium and the embedded sites (idempotent)."""
        try:
            self.host.close()
        finally:
            if self.sites is not None:
                self.sites.close()
            if self._http is not None:
                self._http.close()


@dataclass
class _Episode:
    task_index: int
    config: dict
    intent: str
    sites: list
    actions: list = field(default_factory=list)           # executed Action objects (and stops)
    descriptions: list = field(default_factory=list)      # PREVIOUS ACTION text per step
    parse_failures: int = 0
    terminated: bool = False
    truncated: bool = False
    reward: float = 0.0
    eval_status: str = ""
    eval_error: str = ""


class WebarenaSession:
    """One env: a browser context (made fresh at every reset) and the episode being played.

    All methods are blocking (they wait on the world's browser loop) and are called by the server's
    threadpool with the session held exclusively.
    """

    def __init__(self, world: WebarenaWorld):
        self.world = world
        self.instance = "env-" + uuid.uuid4().hex[:12]
        self.env_idx: Optional[int] = None  # the server's id for this env, named in site_busy refusals
        self.browser = BrowserSession(world.host)
        self.episode: Optional[_Episode] = None
        self.observation = None  # last browser_env Observation

    # -- episode -----------------------------------------------------------------------------------
    def reset(self, idx: Optional[int]) -> ResetResult:
        """Start task `idx`; the observation is in the prompt layout (as `step`'s), and `info` holds
        `{"sites", "object": intent, "task_id", "info": {"timing_ms": ...}}`.

        Raises:
            TaskIndexError: idx is None or not a task index.
            ValueError: the task needs a site whose URL is not configured (message names the env var).
            SiteBusyError: a real deployment's site this state-changing task needs is held by another
                env's state-changing episode (`site_locks`).
        """
        from agentenv_webarena.tasks.config import changes_state, substitute_urls

        if idx is None or not 0 <= idx < self.world.num_tasks:
            raise TaskIndexError(f"task index {idx} is out of range: this server has {self.world.num_tasks} tasks "
                                 f"(0..{self.world.num_tasks - 1})")
        config = substitute_urls(self.world.tasks[idx], self.world.config.site_urls)
        self.world.site_locks.release(self.instance)  # a reset ends this env's last episode, even a refused one
        self.episode = None
        if self.world.guards_state and changes_state(config):
            holder = Holder(self.instance, self.env_idx, idx, config.get("task_id", idx))
            self.world.site_locks.acquire(config.get("sites") or [], holder)
        try:
            return self._start(idx, config)
        except BaseException:
            self.world.site_locks.release(self.instance)
            raise

    def _start(self, idx: int, config: dict) -> ResetResult:
        from agentenv_webarena.tasks.config import start_urls

        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        if self.world.config.embedded:
            from agentenv_webarena.sites import reset_instance

            try:
                reset_instance(next(iter(self.world.config.site_urls.values())), self.instance,
                               client=self.world.http())
            except Exception as exc:
                raise StartPageError(f"task {idx}: the embedded sites did not restore this env's state "
                                     f"({type(exc).__name__}: {exc})") from exc
        timings["site_reset_ms"] = (time.perf_counter() - t0) * 1e3
        headers = {}
        if self.world.config.embedded:
            from agentenv_webarena.sites.store import INSTANCE_HEADER

            headers[INSTANCE_HEADER] = self.instance
        sites = list(config.get("sites") or [])

        # Real sites: the task's cookie file while it is fresh; else this context logs in and renews
        # the file. The login runs on the browser loop for this context only, never blocking others.
        state_path = None if self.world.config.embedded else config.get("storage_state")
        fresh = bool(state_path) and _auth().storage_state_fresh(state_path, self.world.config.auth_renew_before_s)
        storage_state = state_path if fresh else None

        async def login(context) -> None:
            if not config.get("require_login", True) or fresh:
                return
            auth = _auth()
            for site in sites:
                base = self.world.config.site_urls.get(site)
                if base:
                    await auth.login(context, site, base, embedded=self.world.config.embedded)
            if state_path:
                await auth.write_storage_state(context, state_path)
                logger.info("renewed the storage state %s", state_path)

        t1 = time.perf_counter()
        try:
            self.world.host.run(
                self.browser.open(start_urls(config), storage_state=storage_state,
                                  extra_http_headers=headers or None, before_goto=login),
                timeout_s=self.world.config.call_timeout_s,
            )
        except TimeoutError:
            raise
        except Exception as exc:
            raise StartPageError(f"task {idx}: could not open {start_urls(config)} ({type(exc).__name__}: {exc}); "
                                 "check that the sites are up and their URLs configured") from exc
        timings["open_ms"] = (time.perf_counter() - t1) * 1e3
        self.episode = _Episode(task_index=idx, config=config, intent=str(config.get("intent", "")), sites=sites)
        t2 = time.perf_counter()
        self.observation = self.world.host.run(self.browser.observe(), timeout_s=self.world.config.call_timeout_s)
        timings["observe_ms"] = (time.perf_counter() - t2) * 1e3
        logger.debug("instance %s reset to task %d in %.0f ms (%s)", self.instance, idx,
                     (time.perf_counter() - t0) * 1e3, {k: round(v, 1) for k, v in timings.items()})
        return ResetResult(observation=self._prompt(), info={
            "sites": sites, "object": self.episode.intent, "task_id": config.get("task_id", idx),
            "info": {"timing_ms": _rounded(timings)}})

    def step(self, text: str) -> StepResult:
        """Apply the agent's raw text; the reward is the task score once the episode is over.

        Raises:
            EpisodeStateError: no reset yet.
        """
        ep = self._episode()
        if ep.terminated or ep.truncated:
            return self._result(0.0, {"error": "the episode is over; call /reset to start a task"})
        info: dict[str, Any] = {}
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        try:
            action = parse_action(text)
        except ActionParsingError as exc:
            ep.parse_failures += 1
            ep.actions.append(Action(ActionTypes.NONE, raw=text))
            ep.descriptions.append(_PARSE_HINT.format(text=_clip(text, 300), error=exc))
            info.update(error=f"ActionParsingError: {exc}", action=None)
            if ep.parse_failures >= self.world.config.parsing_failure_th:
                return self._early_stop(f"Failed to parse actions for {ep.parse_failures} times", info)
            return self._after_step(info)
        ep.parse_failures = 0
        info["action"] = str(action)
        if action.action_type == ActionTypes.STOP:
            ep.actions.append(action)
            ep.descriptions.append(str(action))
            return self._finish(action, info, terminated=True)
        if action.action_type == ActionTypes.GOTO:
            action = dataclasses.replace(action, url=self.world.to_local_url(action.url))
        description = self._describe(action)
        try:
            self.world.host.run(self.browser.execute(action), timeout_s=self.world.config.call_timeout_s)
        except ActionExecutionError as exc:
            info["error"] = f"ActionExecutionError: {exc}"
            description = f"Attempt to perform \"{action}\" failed: {exc}"
        except TimeoutError:
            info["error"] = f"TimeoutError: the action took longer than {self.world.config.call_timeout_s:.0f} s"
            description = f"Attempt to perform \"{action}\" timed out"
        except Exception as exc:  # a browser fault must cost this step, not the episode or the server
            logger.warning("instance %s: %s failed: %s: %s", self.instance, action, type(exc).__name__, exc)
            info["error"] = f"{type(exc).__name__}: {exc}"
            description = f"Attempt to perform \"{action}\" failed: {type(exc).__name__}"
        timings["action_ms"] = (time.perf_counter() - t0) * 1e3
        ep.actions.append(action)
        ep.descriptions.append(description)
        reason = self._early_stop_reason()
        if reason is not None:
            return self._early_stop(reason, info, timings)
        return self._after_step(info, timings)

    def observe(self) -> str:
        """The current observation in WebArena's prompt layout."""
        self._episode()
        return self._prompt()

    def observation_metadata(self) -> dict:
        """`{"obs_nodes_info", "url", "tabs"}` of the last observation (ids the agent may use)."""
        self._episode()
        obs = self.observation
        return {"obs_nodes_info": obs.nodes_info, "url": obs.url, "display_url": self.world.to_display_url(obs.url),
                "tabs": obs.tabs}

    def screenshot(self) -> bytes:
        """A PNG of the current tab's viewport."""
        self._episode()
        return self.world.host.run(self.browser.screenshot(), timeout_s=self.world.config.call_timeout_s)

    def close(self) -> None:
        """Close the browser context, free the embedded sites' instance or the real sites it holds (idempotent)."""
        self.world.site_locks.release(self.instance)
        try:
            self.world.host.run(self.browser.close(), timeout_s=30)
        except Exception as exc:  # a dead browser has nothing left to free
            logger.debug("closing browser session %s failed: %s", self.instance, exc)
        if self.world.config.embedded and self.world.sites is not None:
            from agentenv_webarena.sites import drop_instance

            try:
                drop_instance(next(iter(self.world.config.site_urls.values())), self.instance, client=self.world.http())
            except Exception as exc:
                logger.debug("dropping site instance %s failed: %s", self.instance, exc)
        self.episode = None

    # -- internals ---------------------------------------------------------------------------------
    def _episode(self) -> _Episode:
        if self.episode is None:
            raise EpisodeStateError("this env has no task yet: call /reset with a task index first")
        return self.episode

    def _describe(self, action: Action) -> str:
        if action.element_id and self.observation is not None:
            node = self.observation.nodes_info.get(action.element_id)
            if node is None:
                return (f"Attempt to perform \"{action.action_type.value}\" on element \"[{action.element_id}]\" "
                        "but no matching element found. Please check the observation more carefully.")
            return f"{action} where [{action.element_id}] is {str(node.get('text', '')).strip()}"
        return str(action)

    def _early_stop_reason(self) -> Optional[str]:
        ep, cfg = self.episode, self.world.config
        acted = [a for a in ep.actions if a.action_type != ActionTypes.NONE]
        if len(ep.actions) >= cfg.max_steps:
            return f"Reach max steps {cfg.max_steps}"
        k = cfg.repeating_action_failure_th
        if not acted:
            return None
        last = acted[-1]
        if last.action_type == ActionTypes.TYPE:
            if sum(is_equivalent(a, last) for a in acted) >= k:
                return f"Same typing action for {k} times"
        elif len(acted) >= k and all(is_equivalent(a, last) for a in acted[-k:]):
            return f"Same action for {k} times"
        return None

    def _early_stop(self, reason: str, info: dict, timings: Optional[dict] = None) -> StepResult:
        info["early_stop"] = reason
        stop = create_stop_action(f"Early stop: {reason}")
        return self._finish(stop, info, terminated=False, timings=timings)

    def _finish(self, stop: Action, info: dict, terminated: bool, timings: Optional[dict] = None) -> StepResult:
        ep = self.episode
        timings = dict(timings or {})
        t0 = time.perf_counter()
        score, status, error = self._evaluate(stop)
        timings["eval_ms"] = (time.perf_counter() - t0) * 1e3
        ep.terminated, ep.truncated = terminated, not terminated
        ep.reward, ep.eval_status, ep.eval_error = score, status, error
        self.world.site_locks.release(self.instance)  # scored: the sites' state is no longer this episode's
        info["eval_status"] = status
        if error:
            info["eval_error"] = error
        t1 = time.perf_counter()
        self._refresh_observation(info)
        timings["observe_ms"] = (time.perf_counter() - t1) * 1e3
        info["timing_ms"] = _rounded(timings)
        return self._result(score, info)

    def _evaluate(self, stop: Action) -> tuple[float, str, str]:
        from agentenv_webarena.webarena.evaluation_harness import JudgeError, NeedsJudge, evaluator_router, judge_calls

        ep = self.episode
        trajectory: list[Any] = [{"action": str(a)} for a in ep.actions[:-1] if a.action_type != ActionTypes.STOP]
        trajectory.append({"action_type": "stop", "answer": stop.answer})
        try:
            evaluator = evaluator_router(ep.config, judge=self.world.judge, site_urls=self.world.config.site_urls)
            timeout_s = self.world.config.call_timeout_s  # plus each judge request's own bound
            if self.world.judge is not None:
                timeout_s += self.world.judge.timeout_s * judge_calls(ep.config)
            score = self.world.host.run(evaluator(trajectory, ep.config, self.browser.page), timeout_s=timeout_s)
            return float(score), "scored", ""
        except (NeedsJudge, JudgeError) as exc:  # no verdict: not a 0, the trainer leaves the episode out
            if isinstance(exc, JudgeError):
                logger.warning("task %d: the LLM judge failed, the episode needs a judge: %s", ep.task_index, exc)
            return 0.0, "needs_judge", str(exc)
        except Exception as exc:  # a broken evaluator must not take the episode (or the server) down
            logger.warning("task %d: evaluation failed: %s: %s", ep.task_index, type(exc).__name__, exc)
            return 0.0, "error", f"{type(exc).__name__}: {exc}"

    def _after_step(self, info: dict, timings: Optional[dict] = None) -> StepResult:
        timings = dict(timings or {})
        t0 = time.perf_counter()
        self._refresh_observation(info)
        timings["observe_ms"] = (time.perf_counter() - t0) * 1e3
        info["timing_ms"] = _rounded(timings)
        return self._result(0.0, info)

    def _refresh_observation(self, info: dict) -> None:
        try:
            self.observation = self.world.host.run(self.browser.observe(), timeout_s=self.world.config.call_timeout_s)
        except Exception as exc:  # keep the last observation; the agent reads the error in info
            info["error"] = (info.get("error", "") + f"; observation failed: {exc}").lstrip("; ")

    def _result(self, reward: float, info: dict) -> StepResult:
        ep = self.episode
        info.setdefault("step", len(ep.actions))
        info["url"] = self.world.to_display_url(self.observation.url) if self.observation is not None else ""
        return StepResult(observation=self._prompt(), reward=float(reward), terminated=ep.terminated,
                          truncated=ep.truncated, info=info)

    def _prompt(self) -> str:
        ep = self.episode
        tree = self.observation.text if self.observation is not None else ""
        url = self.world.to_display_url(self.observation.url) if self.observation is not None else ""
        previous = ep.descriptions[-1] if ep.descriptions else "None"
        return f"OBSERVATION:\n{tree}\nURL: {url}\nOBJECTIVE: {ep.intent}\nPREVIOUS ACTION: {previous}"


def _auth():
    from agentenv_webarena.tasks import auth

    return auth


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _rounded(timings: dict) -> dict:
    return {k: round(v, 2) for k, v in timings.items()}
