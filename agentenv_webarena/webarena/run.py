"""The WebArena benchmark CLI: evaluate an agent on WebArena tasks without the trainer.

    python -m agentenv_webarena.run --agent_type prompt --provider openai --model gpt-4o \
        --instruction_path agentenv_webarena/webarena/agent/prompts/jsons/p_cot_id_actree_2s.json \
        --test_start_idx 0 --test_end_idx 20 --result_dir results/gpt4o

Flags follow WebArena's `run.py` where they apply (`--agent_type`, `--instruction_path`,
`--provider`, `--model`, `--mode`, `--temperature`, `--top_p`, `--max_tokens`, `--max_retry`,
`--max_steps`, `--parsing_failure_th`, `--repeating_action_failure_th`, `--max_obs_length`,
`--observation_type`, `--current_viewport_only`, `--viewport_width/height`, `--test_start_idx`,
`--test_end_idx`, `--result_dir`, `--test_config_base_dir`, `--save_screenshots`); ours are
`--ids FILE` (an AgentItemId list; start/end index into it), `--env-addr URL` (a running env
server instead of an in-process env), `--num_workers` (tasks at once, one browser context each),
`--tokenizer` (what `--max_obs_length` counts in for provider=openai) and the LLM judge of the
in-process env (`--judge-base-url`, `--judge-model`, `--judge-api-key`, `--judge-timeout-s`; with
`--env-addr` the server's judge decides). A task that needs the judge and gets no verdict counts as
`needs_judge`: it is listed, and left out of the success rate's denominator.

Tasks: `--test_config_base_dir` is a directory of per-task `{i}.json` files (what WebArena's
`generate_test_data.py` writes) or a task JSON list; default: the embedded suite. In-process, the
env starts the embedded sites when no site URL (`SHOPPING`, `REDDIT`, ...) is set. With
`--env-addr` the server's own launch flags decide its step limits and browser settings.

Writes into `--result_dir`: `results.json` (success rate, Wilson 95% CI, per-task rows),
`render_<task_id>.html` per task, `trajectories.jsonl`, `config.json` and `log.txt`.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence

from agentenv.controller.types import StepResult
from agentenv.item_ids import item_indices
from agentenv_webarena.webarena.agent.agent import AGENT_TYPES, Agent, AgentOutput, construct_agent
from agentenv_webarena.webarena.agent.llm import PROVIDERS
from agentenv_webarena.webarena.agent.prompts import DEFAULT_INSTRUCTION
from agentenv_webarena.webarena.agent.prompts.prompt_constructor import MODES, split_prompt_text
from agentenv_webarena.webarena.report import EpisodeRecord, StepRecord, record_dict, write_results, write_task_report

__all__ = ["RunConfig", "build_arg_parser", "select_tasks", "run_episode", "run", "main"]

logger = logging.getLogger(__name__)

OBSERVATION_TYPES = ("accessibility_tree",)


@dataclass
class RunConfig:
    """Every setting of a benchmark run (the CLI flags; defaults live here only)."""

    agent_type: str = "prompt"                # prompt | teacher_forcing
    instruction_path: str = DEFAULT_INSTRUCTION  # prompt template JSON (agent/prompts/jsons/)
    provider: str = "openai"                  # openai (OPENAI_BASE_URL / OPENAI_API_KEY) | local (HF checkpoint)
    model: str = ""                           # served model name, or the checkpoint directory for provider=local
    mode: str = "chat"                        # chat | completion
    temperature: float = 1.0
    top_p: float = 0.9
    max_tokens: int = 384                     # new tokens per reply
    max_retry: int = 1                        # LLM calls per step at most while replies hold no valid action
    tokenizer: Optional[str] = None           # HF tokenizer --max_obs_length counts in (default: the model dir's)
    max_steps: int = 30                       # actions per episode before the env truncates it
    parsing_failure_th: int = 3               # consecutive unparseable replies that end the episode
    repeating_action_failure_th: int = 3      # identical consecutive actions that end the episode
    max_obs_length: int = 1920                # accessibility-tree cap in tokens in the prompt (0 = none)
    observation_type: str = "accessibility_tree"
    current_viewport_only: bool = True        # observe only what is inside the viewport (WebArena's run.py forces it)
    viewport_width: int = 1280
    viewport_height: int = 720
    test_config_base_dir: str = ""            # {i}.json directory or task JSON list; "" = the embedded suite
    ids: Optional[str] = None                 # AgentItemId JSON list (webarena_<index>)
    test_start_idx: int = 0                   # first position (in --ids, else in the task list)
    test_end_idx: Optional[int] = None        # one past the last position (None = to the end)
    result_dir: str = ""                      # "" = results/<agent_type>_<time>
    env_addr: Optional[str] = None            # a running env server; None = an in-process env
    num_workers: int = 1                      # tasks run at once, one browser context each
    save_screenshots: bool = False            # a PNG per step in the HTML report
    http_timeout_s: float = 300.0             # per env-server call with --env-addr
    judge_base_url: Optional[str] = None      # OpenAI-compatible LLM judge (fuzzy_match, N/A reasons); None = env var
    judge_model: Optional[str] = None         # judge model (None: $WEBARENA_JUDGE_MODEL, else gpt-4-1106-preview)
    judge_api_key: Optional[str] = None       # judge token (None: $WEBARENA_JUDGE_API_KEY, else $OPENAI_API_KEY)
    judge_timeout_s: Optional[float] = None   # bound on one judge request (None: $WEBARENA_JUDGE_TIMEOUT_S, else 60)

    def __post_init__(self) -> None:
        for key, choices in (("agent_type", AGENT_TYPES), ("provider", PROVIDERS), ("mode", MODES),
                             ("observation_type", OBSERVATION_TYPES)):
            if getattr(self, key) not in choices:
                raise ValueError(f"--{key}={getattr(self, key)!r} is not supported; choose one of {list(choices)}")
        for key in ("max_tokens", "max_retry", "max_steps", "parsing_failure_th", "repeating_action_failure_th",
                    "viewport_width", "viewport_height", "num_workers"):
            if getattr(self, key) < 1:
                raise ValueError(f"--{key} must be >= 1, got {getattr(self, key)}")
        if self.max_obs_length < 0 or self.test_start_idx < 0:
            raise ValueError("--max_obs_length and --test_start_idx must be >= 0")
        if self.test_end_idx is not None and self.test_end_idx < self.test_start_idx:
            raise ValueError(f"--test_end_idx={self.test_end_idx} is before --test_start_idx={self.test_start_idx}")
        if self.agent_type == "prompt" and not self.model:
            raise ValueError("--agent_type prompt needs --model (a served model name for provider=openai, an HF "
                             "checkpoint directory for provider=local)")
        if self.judge_base_url and not self.judge_base_url.startswith(("http://", "https://")):
            raise ValueError(f"--judge-base-url must be an http(s) URL, got {self.judge_base_url!r}")
        if self.judge_timeout_s is not None and self.judge_timeout_s <= 0:
            raise ValueError(f"--judge-timeout-s must be > 0, got {self.judge_timeout_s}")


_HELP = {
    "ids": "AgentItemId JSON list (webarena_<index>); --test_start_idx/--test_end_idx index into it",
    "env_addr": "base URL of a running env server (python -m agentenv_webarena.launch); default: in-process env",
    "test_config_base_dir": "directory of per-task {i}.json files, or a task JSON list (default: the embedded suite)",
    "save_screenshots": "put a screenshot of every step in the HTML report",
    "tokenizer": "HF tokenizer (dir or name) --max_obs_length counts in; default: the tokenizer in --model when it "
                 "is a local directory, else ~4 characters a token (logged)",
    "max_obs_length": "cap on the accessibility tree in the prompt, in tokens of the model's tokenizer (0 = none)",
    "current_viewport_only": "observe only the elements inside the viewport, WebArena's observation (its run.py "
                             "forces it on); --no-current_viewport_only or --whole-page observe the whole page",
}
_FLAG_NAMES = {"env_addr": ["--env-addr", "--env_addr"],
               **{k: [f"--{k.replace('_', '-')}", f"--{k}"]
                  for k in ("judge_base_url", "judge_model", "judge_api_key", "judge_timeout_s")}}


def build_arg_parser() -> argparse.ArgumentParser:
    """The CLI, one flag per `RunConfig` field (defaults read from the dataclass)."""
    parser = argparse.ArgumentParser(description="Evaluate an agent on WebArena tasks (WebArena's run.py flags)")
    choices = {"agent_type": AGENT_TYPES, "provider": PROVIDERS, "mode": MODES, "observation_type": OBSERVATION_TYPES}
    for f in dataclasses.fields(RunConfig):
        names = _FLAG_NAMES.get(f.name, [f"--{f.name}"])
        help_text = _HELP.get(f.name, f.name.replace("_", " "))
        if f.type in ("bool", bool):
            action = argparse.BooleanOptionalAction if f.default else "store_true"  # on by default: --no-<flag>
            parser.add_argument(*names, dest=f.name, action=action, default=f.default,
                                help=f"{help_text} (default: %(default)s)" if f.default else help_text)
            continue
        kind = {"int": int, "float": float, "Optional[int]": int, "Optional[float]": float}.get(str(f.type), str)
        parser.add_argument(*names, dest=f.name, type=kind, default=f.default, choices=choices.get(f.name),
                            help=f"{help_text} (default: %(default)s)")
    parser.add_argument("--whole-page", "--whole_page", dest="current_viewport_only", action="store_false",
                        help="observe the whole page (same as --no-current_viewport_only; not WebArena's observation)")
    return parser


def select_tasks(num_tasks: int, ids: Optional[str], start: int, end: Optional[int]) -> list[int]:
    """Task indices to run: positions [start, end) of the --ids list, else of range(num_tasks).

    Raises:
        ValueError: an id names a task index the task list does not have.
    """
    if ids:
        pool = item_indices(ids)
        bad = [i for i in pool if not 0 <= i < num_tasks]
        if bad:
            raise ValueError(f"{ids} names task indices {bad[:5]} outside the {num_tasks} tasks of this task list")
    else:
        pool = list(range(num_tasks))
    return pool[start:end]


# -- environments: the same few calls in-process and over HTTP ---------------------------------------

class EpisodeEnv(Protocol):
    """What an episode needs of an env: an in-process `WebarenaSession` and the HTTP `WebarenaEnvClient` both are
    one (the server's API and the session answer the same calls)."""

    def reset(self, index: int) -> Any: ...   # has `.observation`
    def step(self, text: str) -> StepResult: ...
    def observation_metadata(self) -> dict: ...
    def screenshot(self) -> bytes: ...
    def close(self) -> None: ...


def open_env(cfg: "RunConfig", world: Any, num_tasks: int) -> EpisodeEnv:
    """One env for a worker: a session of the in-process `world`, or one env of the server at `cfg.env_addr`."""
    if cfg.env_addr:
        from agentenv.envs.webarena import WebarenaEnvClient

        return WebarenaEnvClient(cfg.env_addr, data_len=num_tasks, timeout=cfg.http_timeout_s)
    from agentenv_webarena.environment import WebarenaSession

    return WebarenaSession(world)


_SITE_WAIT_S = 24 * 3600.0  # a wait for a real site's state-changing episode to end: as long as a run lasts


def _in_process_world(cfg: RunConfig) -> Any:
    from agentenv_webarena.environment import EnvConfig, WebarenaWorld
    from agentenv_webarena.webarena.browser_env import BrowserConfig

    browser = BrowserConfig(viewport_width=cfg.viewport_width, viewport_height=cfg.viewport_height,
                            current_viewport_only=cfg.current_viewport_only, extra_ignored_properties=("url",))
    # On a real deployment the workers' state-changing tasks wait their turn on a site (WebArena runs them one
    # after another) instead of being refused.
    env_config = EnvConfig(task_file=cfg.test_config_base_dir, max_steps=cfg.max_steps,
                           parsing_failure_th=cfg.parsing_failure_th,
                           repeating_action_failure_th=cfg.repeating_action_failure_th, browser=browser,
                           site_lock_wait_s=_SITE_WAIT_S)
    from agentenv_webarena.webarena.evaluation_harness.judge import judge_from_settings

    judge = judge_from_settings(cfg.judge_base_url, cfg.judge_model, cfg.judge_api_key, cfg.judge_timeout_s)
    return WebarenaWorld.load(env_config, judge=judge)


# -- one episode ------------------------------------------------------------------------------------

def run_episode(env: Any, agent: Agent, index: int, task: dict, site_urls: dict[str, str],
                save_screenshots: bool = False, step_cap: int = 200) -> EpisodeRecord:
    """Play task `index` to its end; the env decides when it ends and scores it.

    An agent that raises (e.g. a reference element missing) ends the episode as WebArena's run.py
    does, with `stop [ERROR: ...]`, and the error goes into the record; so does an env failure.

    Args:
        env: an `EpisodeEnv` (`open_env`).
        agent: the worker's agent.
        index: task index on the env.
        task: the task config (for the agent and the record).
        site_urls: the env's site URLs (the teacher-forcing agent substitutes them).
        save_screenshots: keep a PNG of the page before every action.
        step_cap: a guard against an env that never ends an episode.
    """
    record = EpisodeRecord(task_id=int(task.get("task_id", index)), index=index, intent=str(task.get("intent", "")))
    start = time.perf_counter()
    try:
        text = env.reset(index).observation
        agent.reset(task, site_urls)
        for _ in range(step_cap):
            state = split_prompt_text(text)
            shot = env.screenshot() if save_screenshots else None
            try:
                out = agent.next_action(state, env.observation_metadata() if agent.needs_metadata else None)
            except Exception as exc:  # the agent failed: stop as WebArena does, keep the reason
                record.error = f"agent: {type(exc).__name__}: {exc}"
                out = AgentOutput(action=f"stop [ERROR: {type(exc).__name__}]", response=f"(agent error) {exc}")
            result = env.step(out.env_text)
            info = result.info or {}
            record.steps.append(StepRecord(observation=state.observation, url=state.url,
                                           previous_action=state.previous_action, response=out.response,
                                           action=out.action, attempts=out.attempts, parse_error=out.parse_error,
                                           env_error=str(info.get("error", "")), screenshot_png=shot))
            text = result.observation
            if result.done:
                record.score = result.reward
                record.eval_status = str(info.get("eval_status", ""))
                record.eval_error = str(info.get("eval_error", ""))
                record.early_stop = str(info.get("early_stop", ""))
                break
        else:
            record.error = record.error or f"the env did not end the episode within {step_cap} steps"
    except Exception as exc:  # one broken task must not stop the run
        logger.exception("task %s failed", record.task_id)
        record.error = record.error or f"{type(exc).__name__}: {exc}"
    record.seconds = time.perf_counter() - start
    return record


# -- the run ------------------------------------------------------------------------------------------

def _load_tasks(cfg: RunConfig) -> list[dict]:
    from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks

    path = cfg.test_config_base_dir or EMBEDDED_TASK_FILE
    if not os.path.exists(path):
        raise ValueError(f"--test_config_base_dir {path!r} does not exist; give a directory of {{i}}.json files or "
                         "a task JSON list (leave it out for the embedded suite)")
    return load_tasks(path)


def _attach_log(result_dir: str) -> logging.Handler:
    handler = logging.FileHandler(os.path.join(result_dir, "log.txt"), encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    return handler


def run(cfg: RunConfig) -> dict:
    """Run the selected tasks and write the results; returns `results.json`'s content."""
    if not cfg.result_dir:
        stamp = time.strftime("%Y%m%d_%H%M%S")
        cfg = dataclasses.replace(cfg, result_dir=os.path.join("results", f"{cfg.agent_type}_{stamp}"))
    os.makedirs(cfg.result_dir, exist_ok=True)
    handler = _attach_log(cfg.result_dir)
    with open(os.path.join(cfg.result_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump({**dataclasses.asdict(cfg), "judge_api_key": "<set>" if cfg.judge_api_key else None}, f, indent=2)
    tasks = _load_tasks(cfg)
    world = None
    llm = None
    try:
        if cfg.env_addr:
            import httpx

            served = httpx.get(cfg.env_addr.rstrip("/") + "/tasks", timeout=30).json()
            if served["num_tasks"] != len(tasks):
                raise ValueError(f"the env server has {served['num_tasks']} tasks but "
                                 f"{cfg.test_config_base_dir or 'the embedded suite'} has {len(tasks)}; pass the "
                                 "server's task file as --test_config_base_dir")
            site_urls = served["site_urls"]
            logger.info("env server %s: its launch flags decide max_steps, the early stops, the browser and the "
                        "LLM judge (%s)", cfg.env_addr, served.get("judge") or "none")
            if not served.get("judge"):
                logger.warning("the env server has no LLM judge: fuzzy_match / N/A-reason tasks answered in other "
                               "words report needs_judge; start it with --judge-base-url")
        else:
            world = _in_process_world(cfg)
            site_urls = world.config.site_urls
        indices = select_tasks(len(tasks), cfg.ids, cfg.test_start_idx, cfg.test_end_idx)
        logger.info("running %d tasks with agent_type=%s model=%s on %d workers; results in %s", len(indices),
                    cfg.agent_type, cfg.model or "-", cfg.num_workers, cfg.result_dir)
        if cfg.agent_type == "prompt":
            from agentenv_webarena.webarena.agent.llm import build_llm

            llm = build_llm(cfg)
        records = _run_workers(cfg, tasks, indices, world, site_urls, llm)
        extra = {"agent_type": cfg.agent_type, "env": cfg.env_addr or "in-process"}
        if cfg.agent_type == "prompt":
            extra.update(model=cfg.model, provider=cfg.provider, mode=cfg.mode, instruction_path=cfg.instruction_path)
        results = write_results(cfg.result_dir, records, extra)
        with open(os.path.join(cfg.result_dir, "trajectories.jsonl"), "w", encoding="utf-8") as f:
            for record in records:
                f.write(json.dumps(record_dict(record)) + "\n")
        ci = results["ci95"]
        logger.info("success rate %.4f (%d/%d scored), 95%% CI [%.3f, %.3f]; %d tasks need an LLM judge and are "
                    "left out of the rate", results["success_rate"], results["success"], results["scored"], ci[0],
                    ci[1], results["needs_judge"])
        return results
    finally:
        if llm is not None:
            llm.close()
        if world is not None:
            world.close()
        logging.getLogger().removeHandler(handler)
        handler.close()


def _run_workers(cfg: RunConfig, tasks: list[dict], indices: list[int], world: Any, site_urls: dict,
                 llm: Any) -> list[EpisodeRecord]:
    todo: queue.Queue = queue.Queue()
    for position, index in enumerate(indices):
        todo.put((position, index))
    records: list[Optional[EpisodeRecord]] = [None] * len(indices)
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            agent = construct_agent(cfg, llm=llm)
            env = open_env(cfg, world, len(tasks))
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            failures.append(exc)
            return
        try:
            while True:
                try:
                    position, index = todo.get_nowait()
                except queue.Empty:
                    return
                record = run_episode(env, agent, index, tasks[index], site_urls, cfg.save_screenshots,
                                     step_cap=cfg.max_steps + cfg.parsing_failure_th + 10)
                records[position] = record
                write_task_report(cfg.result_dir, record)
                verdict = ("NEEDS JUDGE" if record.eval_status == "needs_judge"
                           else "PASS" if record.score >= 1 else "FAIL")
                logger.info("[Result] (%s) task %d: score %g in %d steps%s", verdict,
                            record.task_id, record.score, len(record.steps),
                            f" error={record.error}" if record.error else "")
        finally:
            agent.close()
            env.close()

    threads = [threading.Thread(target=worker, name=f"webarena-run-{i}", daemon=True)
               for i in range(max(1, min(cfg.num_workers, len(indices))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise RuntimeError(f"a worker could not start: {type(failures[0]).__name__}: {failures[0]}") from failures[0]
    return [r for r in records if r is not None]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """CLI entry point; prints the results summary (without per-task rows) as one JSON line."""
    parser = build_arg_parser()
    args = parser.parse_args(argv)
    try:
        cfg = RunConfig(**vars(args))
    except ValueError as exc:
        parser.error(str(exc))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    results = run(cfg)
    print(json.dumps({k: v for k, v in results.items() if k != "per_task"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
