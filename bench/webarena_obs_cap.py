"""Does an observation cap cut answers the tasks need? Replay every string-matched task of the embedded suite.

    python bench/webarena_obs_cap.py [--viewport-only 0|1] [--limit N] [--out bench/webarena_obs_cap.json]

In process (embedded sites + one Chromium, no HTTP): for each task scored by `string_match` with a
`must_include` / `exact_match` reference, reset, replay its `reference_action_sequence` up to the
`stop` (the page where the answer is read) and take that observation's accessibility tree. For each
reference string found in the whole tree (case-insensitive, standing on its own: not inside a word
or an element id; answers computed from the page, such as some counts, are not in it and are
skipped), check whether it is still there after each cap: WebArena's 1,920 tokens of each tokenizer
at hand (the tiny model's, `verl.utils.tiny_model`, the CPU profile's policy;
the shipped WebShop SFT policy's), 1,920 approximate tokens of 4 characters (the run CLI without a
tokenizer), and the old character caps (1,500: the CPU job; 1,920: the run CLI without a tokenizer).
Also records the trees' sizes and the smallest cap that keeps every answer, in each codec's tokens.
Writes the counts, the cut answers and the machine, commit and date to --out.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from agentenv.controller.tokens import ApproxTokenCodec, HFTokenCodec, cut_to_tokens  # noqa: E402
from agentenv.envs.webarena import OBSERVATION_LAYOUT, WEBARENA_MAX_OBS_TOKENS  # noqa: E402
from agentenv_webarena.expert import play_task  # noqa: E402
from agentenv_webarena.tasks.reference import ReplayError  # noqa: E402


class _Chars:
    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids: list[int]) -> str:
        return "".join(map(chr, ids))


def cpu_profile_cap(kind: str = "train") -> int:
    """`max_obs_tokens` of the WebArena CPU profile (scripts/profiles/webarena_<kind>_cpu.args, else the
    base profile's)."""
    for name in (f"webarena_{kind}_cpu.args", f"webarena_{kind}.args"):
        with open(os.path.join(ROOT, "scripts", "profiles", name), encoding="utf-8") as f:
            for line in f:
                key, _, value = line.split("#", 1)[0].strip().partition("=")
                if key.endswith("agentgym.max_obs_tokens"):
                    return int(value)
    raise ValueError(f"no agentgym.max_obs_tokens in the webarena_{kind} profiles")


def cpu_profile_codec_and_cap() -> tuple[HFTokenCodec, int]:
    """What the CPU profile's policy is shown: the tiny model's tokenizer and the smaller of the train / eval
    profiles' `max_obs_tokens`."""
    from transformers import AutoTokenizer

    from verl.utils.tiny_model import build_tiny_model

    codec = HFTokenCodec(AutoTokenizer.from_pretrained(build_tiny_model()))
    return codec, min(cpu_profile_cap("train"), cpu_profile_cap("eval"))


def _codecs() -> dict:
    from transformers import AutoTokenizer

    from verl.utils.tiny_model import build_tiny_model

    tiny = HFTokenCodec(AutoTokenizer.from_pretrained(build_tiny_model()))
    sft = HFTokenCodec(AutoTokenizer.from_pretrained(os.path.join(ROOT, "agentenv_webshop", "sft_policy")))
    n, cpu = WEBARENA_MAX_OBS_TOKENS, cpu_profile_cap()
    return {f"tiny_model_{cpu}_tokens (CPU profile)": (tiny, cpu), f"tiny_model_{n}_tokens": (tiny, n),
            f"sft_policy_{n}_tokens": (sft, n), f"approx_{n}_tokens": (ApproxTokenCodec(), n),
            "chars_1500": (_Chars(), 1500), "chars_1920": (_Chars(), 1920)}


def question_tasks(tasks: list[dict]) -> list[int]:
    """Indices of the tasks scored by a string the page may show (`must_include` / `exact_match`)."""
    return [i for i, t in enumerate(tasks) if "string_match" in t["eval"]["eval_types"] and answers(t)]


def answer_page_tree(world, session, index: int) -> str:
    """Reset task `index`, replay its reference actions up to the `stop` (scrolling, as the expert does, while a
    step's element is below the fold); the accessibility tree shown then."""
    result = play_task(session, index, world.tasks[index], world.config.site_urls)
    if not result.answer_page:
        raise ReplayError(f"task {index} did not reach its stop: {result.error}")
    return OBSERVATION_LAYOUT.match(result.answer_page)["observation"]


def cut_answers(task: dict, tree: str, codec, cap: int) -> tuple[int, list[str]]:
    """Of the answers of `task` its answer page's accessibility tree `tree` shows, those a cut of the tree to `cap`
    tokens of `codec` loses: (number of answers shown, descriptions of those cut)."""
    shown = cut_to_tokens(tree, codec, cap)
    checked, cut = 0, []
    for answer in answers(task):
        if found(answer, tree) >= 0:
            checked += 1
            if found(answer, shown) < 0:
                cut.append(f"task {task['task_id']}: {answer!r} at character {found(answer, tree)} of {len(tree)}")
    return checked, cut


def answers(task: dict) -> list[str]:
    """The reference strings of a task's `must_include` / `exact_match` (N/A left out)."""
    refs = (task.get("eval") or {}).get("reference_answers") or {}
    out = list(refs.get("must_include") or [])
    if isinstance(refs.get("exact_match"), str):
        out.append(refs["exact_match"])
    return [a for a in out if a.strip() and a.strip().upper() != "N/A"]


def found(answer: str, tree: str) -> int:
    """Where `answer` first stands on its own in `tree` (not inside a word or an element id `[11]`); -1: nowhere."""
    match = re.search(r"(?<![\w\[])" + re.escape(answer) + r"(?![\w\]])", tree, re.I)
    return match.start() if match else -1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewport-only", type=int, default=None,
                        help="1: current_viewport_only, 0: whole page (default: the BrowserConfig default)")
    parser.add_argument("--limit", type=int, default=0, help="first N string-matched tasks only (0: all)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "webarena_obs_cap.json"))
    args = parser.parse_args()

    from agentenv_webarena.environment import EnvConfig, WebarenaSession, WebarenaWorld
    from agentenv_webarena.webarena.browser_env import BrowserConfig

    browser_kw = {} if args.viewport_only is None else {"current_viewport_only": bool(args.viewport_only)}
    browser = BrowserConfig(extra_ignored_properties=("url",), **browser_kw)
    codecs = _codecs()
    world = WebarenaWorld.load(EnvConfig(browser=browser))
    session = WebarenaSession(world)
    rows, tokens, needed = [], {name: [] for name in codecs}, {name: [] for name in codecs}
    kept = {name: 0 for name in codecs}
    checked = skipped = errors = 0
    t0 = time.perf_counter()
    try:
        todo = question_tasks(world.tasks)
        todo = todo[: args.limit] if args.limit else todo
        for index in todo:
            task = world.tasks[index]
            try:
                tree = answer_page_tree(world, session, index)
            except Exception as exc:  # noqa: BLE001 - a broken replay is counted, not fatal
                errors += 1
                rows.append({"index": index, "error": f"{type(exc).__name__}: {exc}"})
                continue
            for name, (codec, _) in codecs.items():
                tokens[name].append(len(codec.encode(tree)))
            for answer in answers(task):
                if found(answer, tree) < 0:
                    skipped += 1
                    continue
                checked += 1
                end = found(answer, tree) + len(answer)
                for name, (codec, _) in codecs.items():  # the smallest cap that keeps this answer
                    needed[name].append(len(codec.encode(tree[:end])))
                cut_by = [name for name, (codec, n) in codecs.items()
                          if found(answer, cut_to_tokens(tree, codec, n)) < 0]
                for name in codecs:
                    kept[name] += name not in cut_by
                if cut_by:
                    rows.append({"index": index, "task_id": task["task_id"], "answer": answer,
                                 "at_char": found(answer, tree), "tree_chars": len(tree),
                                 "cut_by": cut_by})
    finally:
        session.close()
        world.close()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    result = {
        "tasks": len(todo), "replay_errors": errors, "answers_checked": checked,
        "answers_not_in_page": skipped, "current_viewport_only": browser.current_viewport_only,
        "kept": kept,
        "tree_tokens": {name: {"median": statistics.median(v), "max": max(v)} for name, v in tokens.items() if v},
        "cap_keeping_every_answer": {name: max(v) for name, v in needed.items() if v},
        "cut": [r for r in rows if "cut_by" in r], "errors": [r for r in rows if "error" in r][:20],
        "seconds": round(time.perf_counter() - t0, 1), "machine": f"{platform.node()} {os.cpu_count()} cores",
        "commit": commit, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    print(f"{len(todo)} tasks ({errors} replay errors), {checked} answers in their page "
          f"({skipped} not in the page), viewport_only={browser.current_viewport_only}")
    for name in codecs:
        stats = result["tree_tokens"].get(name, {})
        print(f"  {name:36s} kept {kept[name]}/{checked}  tree size median {stats.get('median')} "
              f"max {stats.get('max')}; a cap keeping every answer: {result['cap_keeping_every_answer'].get(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
