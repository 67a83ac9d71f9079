"""Check a running WebShop server end to end through verl's interaction API (as verl's recipe does):

    python scripts/test_webshop_interaction.py [--env_server_base http://127.0.0.1:36003] [--session_id 0]

Checks, each printed PASS/FAIL: the interaction initialises; the server answers; an action is
extracted from a ReAct reply (and a reply without one gets a corrective observation); a session is
created, stepped to a purchase with a reward in [0, 1], and cleaned up. Exit status 1 on any failure.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agentenv.controller import ActionParseError, get_adapter  # noqa: E402
from agentenv.envs.webshop import INVALID_ACTION_PREFIX  # noqa: E402


def _check(results: list, name: str, fn: Callable[[], str]) -> bool:
    try:
        detail = fn()
        results.append((name, True, detail))
        return True
    except Exception as exc:  # every failure is reported, then the next check runs if it can
        results.append((name, False, f"{type(exc).__name__}: {exc}"))
        return False


def run_checks(env_server_base: str, session_id: int = 0) -> list[tuple[str, bool, str]]:
    """Run the checks against the server; returns (check, passed, detail) rows."""
    from verl.interactions import WebshopInteraction
    from verl.utils.agentgym.client import wait_for_env_server

    results: list = []
    state: dict = {}

    def init() -> str:
        state["interaction"] = WebshopInteraction({"env_server_base": env_server_base, "timeout": 30, "max_retries": 1})
        return f"name={state['interaction'].name}"

    def connection() -> str:
        wait_for_env_server(env_server_base, max_retries=2, timeout=10)
        return env_server_base

    def extraction() -> str:
        adapter = get_adapter("react", fallback_markers=("search[", "click["))
        action = adapter.parse("Thought:\nI should search.\n\nAction:\nsearch[red shirt]").action
        assert action == "search[red shirt]", action
        try:
            adapter.parse("I am not sure.")
        except ActionParseError:
            return "ReAct action parsed; a reply without one is refused"
        raise AssertionError("a reply without an action was accepted")

    def episode() -> str:
        interaction = state["interaction"]

        async def play() -> str:
            iid = await interaction.start_interaction(session_id=session_id)
            try:
                first = interaction.get_observation(iid)
                assert "Instruction:" in first, first[:200]
                say = lambda text: interaction.generate_response(iid, [{"role": "assistant", "content": text}])  # noqa: E731
                done, text, _, _ = await say("hmm")
                assert not done and text.startswith(INVALID_ACTION_PREFIX), text[:200]
                goal = first.split("Instruction: [SEP] ", 1)[-1].split(" [SEP]", 1)[0]
                done, text, _, _ = await say(f"Action: search[{' '.join(goal.split()[:6])}]")
                asin = next(part for part in text.split(" [SEP] ") if len(part) == 10 and part.startswith("B"))
                done, text, _, _ = await say(f"Action: click[{asin.lower()}]")
                done, text, reward, _ = await say("Action: click[buy now]")
                score = await interaction.calculate_score(iid)
                assert done and 0.0 <= reward <= 1.0 and score == reward, (done, reward, score)
                return f"bought {asin}, reward {reward:.3f}"
            finally:
                await interaction.finalize_interaction(iid)

        return asyncio.run(play())

    def cleanup() -> str:
        interaction = state["interaction"]
        interaction.close()
        assert len(interaction.pool) == 0
        return "sessions closed"

    if _check(results, "init", init) and _check(results, "connection", connection):
        _check(results, "action extraction", extraction)
        _check(results, "create -> step -> reward", episode)
        _check(results, "cleanup", cleanup)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env_server_base", default=os.environ.get("ENV_ADDR", "http://127.0.0.1:36003"))
    parser.add_argument("--session_id", type=int, default=0, help="goal index played")
    args = parser.parse_args(argv)
    results = run_checks(args.env_server_base, args.session_id)
    for name, ok, detail in results:
        print(f"[{'PASS' if ok else 'FAIL'}] {name}: {detail}")
    failed = [name for name, ok, _ in results if not ok]
    print(f"{len(results) - len(failed)}/{len(results)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
