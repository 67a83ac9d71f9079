"""The WebShop expert (the environment's ``cheat()`` oracle) and demonstration conversations.

Owns the scripted policy: given a goal dict it searches with words a model could read off the
instruction (the instruction minus its option/price suffix, filler and stopwords), pages through
the results for the goal ASIN, tries fallback queries when the ASIN is not in the top 50, clicks
it, clicks every goal option value and buys. It plays through the public action interface only,
either a `WebshopSession` in process or an AgentGym-compatible HTTP server.

CLI (success rate = share of episodes with reward 1.0)::

    python -m agentenv_webshop.expert --server http://127.0.0.1:36001 --num-goals 200
    python -m agentenv_webshop.expert --num-goals 500          # in process, no server
    python -m agentenv_webshop.expert --item-ids AgentItemId/webshop_test.json --num-goals 100 --demos-out F
                                         # the first 100 goals of an item-id file (the learning report's probe)
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from agentenv.controller.types import SUCCESS_REWARD, is_success

__all__ = ["ExpertPolicy", "ExpertEnv", "Episode", "SessionEnv", "ClientEnv", "candidate_queries", "request_text",
           "to_conversation", "evaluate", "main"]

logger = logging.getLogger(__name__)

_PRICE_SUFFIX_RE = re.compile(r",? and price lower than [0-9.]+ dollars\s*$")
_WORD_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
# Words of the request that are not about the product (filler, pronouns, function words).
_FILLER = frozenset("""
i i'm im am is are be a an the me my we our you your it its this that these those which who
looking look find get buy want need would like i'd please can could will for to of in on with
and or but some any that's also just style one
""".split())
_MAX_PAGES = 5  # 50 hits, 10 per page


class ExpertEnv(Protocol):
    """What the expert needs from an environment."""

    def reset(self, goal_index: int) -> str: ...
    def step(self, action: str) -> tuple[str, float, bool]: ...
    def clickables(self) -> list[str]: ...


def _option_suffix(goal_options: Any) -> str:
    if isinstance(goal_options, dict) and goal_options:
        return " with " + ", and ".join(f"{k}: {v}" for k, v in goal_options.items())
    return ""


def request_text(goal: dict) -> str:
    """The instruction without WebShop's price suffix and synthetic ``with name: value`` suffix."""
    text = _PRICE_SUFFIX_RE.sub("", goal["instruction_text"])
    suffix = _option_suffix(goal.get("goal_options"))
    if suffix and text.endswith(suffix):
        text = text[: -len(suffix)]
    return text


def _words(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORD_RE.findall(text.lower()):
        if word not in _FILLER:
            seen.setdefault(word, None)
    return list(seen)


def candidate_queries(goal: dict) -> list[str]:
    """Search queries for `goal`, best first, all built from words of the instruction.

    1. every content word of the request (instruction minus option/price suffix);
    2. the request words without the goal's attribute phrases (type and style words);
    3. the request words plus the goal option values (option text is indexed too);
    4. the attribute phrases alone.
    """
    request = _words(request_text(goal))
    attr_words = set(_words(" ".join(goal.get("attributes") or [])))
    options = goal.get("goal_options") or []
    option_values = list(options.values()) if isinstance(options, dict) else list(options)
    queries = [
        " ".join(request),
        " ".join(w for w in request if w not in attr_words),
        " ".join(request + [w for w in _words(" ".join(option_values)) if w not in request]),
        " ".join(w for w in request if w in attr_words),
    ]
    return [q for q in dict.fromkeys(queries) if q]


@dataclass
class Episode:
    """One expert episode: actions taken, observations seen (the first is the reset page), result."""

    goal_index: int
    actions: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    reward: float = 0.0
    done: bool = False
    found: bool = False

    @property
    def success(self) -> bool:
        """True when the purchase earned the full reward."""
        return self.done and is_success(self.reward)


class ExpertPolicy:
    """Scripted oracle that plays a goal to a purchase.

    Args:
        max_pages: result pages to look through per query (WebShop has at most 5).
        click_as_shown: click a product by its id as the page shows it (``click[B0DH0Q8J9B]``) instead of
            AgentGym's lower-cased form (``click[b0dh0q8j9b]``); the env accepts both. Demonstrations for a
            tokenizer that keeps product ids whole use it, so the id the model copies is the token it read.
    """

    def __init__(self, max_pages: int = _MAX_PAGES, click_as_shown: bool = False):
        self.max_pages = max_pages
        self.click_as_shown = click_as_shown

    def play(self, env: ExpertEnv, goal_index: int, goal: dict) -> Episode:
        """Reset `env` to `goal_index` and play `goal` (the dict for that index) to the end."""
        episode = Episode(goal_index)
        episode.observations.append(env.reset(goal_index))
        target = goal["asin"].lower()
        for query in candidate_queries(goal):
            self._act(env, episode, f"search[{query}]",
                      f"I think I should search for the product with the key words from the instruction: {query}.")
            if self._find(env, episode, target):
                episode.found = True
                break
        if not episode.found:
            # Not among the hits of any query: buy nothing. The episode ends unsuccessfully.
            logger.debug("goal %d: %s not found by %s", goal_index, goal["asin"], candidate_queries(goal))
            return episode
        clickables = set(env.clickables())
        for value in self._option_values(goal):
            if value in clickables:
                self._act(env, episode, f"click[{value}]", f"I think I should select the option {value}.")
        self._act(env, episode, "click[buy now]",
                  "I think this product has everything the instruction asks for, so I should buy it.")
        return episode

    def _find(self, env: ExpertEnv, episode: Episode, target: str) -> bool:
        for page in range(1, self.max_pages + 1):
            clickables = env.clickables()
            if target in clickables:
                shown = target.upper()
                self._act(env, episode, f"click[{shown if self.click_as_shown else target}]",
                          f"I think {shown} matches the instruction, so I should open it.")
                return True
            # A page without products (past the last hit) ends the search through this query.
            has_products = any(c not in ("back to search", "next >", "< prev") for c in clickables)
            if page == self.max_pages or not has_products or "next >" not in clickables:
                return False
            self._act(env, episode, "click[next >]",
                      "I think none of these products matches, so I should look at the next page.")
        return False

    @staticmethod
    def _option_values(goal: dict) -> list[str]:
        options = goal.get("goal_options") or []
        values = options.values() if isinstance(options, dict) else options
        return [str(v).lower() for v in values]

    @staticmethod
    def _act(env: ExpertEnv, episode: Episode, action: str, thought: str) -> bool:
        obs, reward, done = env.step(action)
        episode.actions.append(action)
        episode.thoughts.append(thought)
        episode.observations.append(obs)
        if done:
            episode.done, episode.reward = True, float(reward)
        return done


# ---- environments the expert can play ----

class SessionEnv:
    """`ExpertEnv` over an in-process `WebshopSession`."""

    def __init__(self, session: Any):
        self.session = session

    def reset(self, goal_index: int) -> str:
        """Reset the session to goal `goal_index`."""
        return self.session.reset(goal_index).observation

    def step(self, action: str) -> tuple[str, float, bool]:
        """Step the session."""
        out = self.session.step(action)
        return out.observation, out.reward, out.done

    def clickables(self) -> list[str]:
        """Current clickables."""
        return self.session.available_actions()["clickables"]


class ClientEnv:
    """`ExpertEnv` over an AgentGym-compatible WebShop server, through `WebshopEnvClient` (the client
    the trainer uses), so the expert exercises the same client and server path as training.

    Args:
        base_url: server base URL, e.g. ``http://127.0.0.1:36001``.
        timeout: seconds per request.
    """

    def __init__(self, base_url: str, timeout: float = 30.0):
        from agentenv.envs.webshop import WebshopEnvClient  # noqa: PLC0415 - only the HTTP mode needs it

        self.client = WebshopEnvClient(base_url, data_len=0, timeout=timeout)

    def reset(self, goal_index: int) -> str:
        """Start goal `goal_index`; returns the first observation."""
        return self.client.reset(goal_index).observation

    def step(self, action: str) -> tuple[str, float, bool]:
        """Send a bare `search[...]` / `click[...]` action."""
        out = self.client.step(action)
        return out.observation, out.reward, out.done

    def clickables(self) -> list[str]:
        """What can be clicked on the current page."""
        return self.client.available_actions()["clickables"]

    def instruction_text(self) -> str:
        """The current goal's instruction."""
        return self.client.instruction_text()

    def close(self) -> None:
        """Free the server session."""
        self.client.close()


# ---- demonstrations ----

def to_conversation(episode: Episode, conversation_start: Sequence[dict] | None = None) -> dict:
    """An AgentGym/AgentTraj-style demonstration of `episode` for supervised warm-start.

    Returns:
        ``{"item_id": "webshop_<idx>", "conversations": [...]}``: the conversation start (the
        client's ReAct prompt and "Ok." by default), then alternating observation turns
        (``loss: None``) and ``Thought:\\n...\\n\\nAction:\\n...`` turns (``loss: True``).
    """
    if conversation_start is None:
        from agentenv.envs.webshop import WebshopEnvClient  # noqa: PLC0415 - the client's prompt

        conversation_start = WebshopEnvClient.conversation_start
    turns = [dict(m) for m in conversation_start]
    # one more observation than actions (the page after the last action): it gets no turn
    for obs, thought, action in zip(episode.observations, episode.thoughts, episode.actions, strict=False):
        turns.append({"from": "human", "loss": None, "value": obs})
        turns.append({"from": "gpt", "loss": True, "value": f"Thought:\n{thought}\n\nAction:\n{action}"})
    return {"item_id": f"webshop_{episode.goal_index}", "conversations": turns}


# ---- evaluation ----

def evaluate(env: ExpertEnv, goals: Sequence[dict], indices: Sequence[int],
             policy: ExpertPolicy | None = None) -> tuple[float, list[Episode]]:
    """Play each goal index in `indices`; returns (success rate, episodes)."""
    policy = policy or ExpertPolicy()
    episodes = [policy.play(env, i, goals[i]) for i in indices]
    rate = sum(e.success for e in episodes) / max(1, len(episodes))
    return rate, episodes


def main(argv: list[str] | None = None) -> int:
    """CLI: play N goals (through a server or in process) and print the success rate."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default=None, help="WebShop server base URL; in process when omitted")
    parser.add_argument("--num-goals", type=int, default=100, help="number of goals (0 = all)")
    parser.add_argument("--start", type=int, default=0, help="first goal index")
    parser.add_argument("--item-ids", default=None, metavar="ITEM_ID_JSON",
                        help="play the goals of this item-id file (the first --num-goals) instead of a range")
    parser.add_argument("--data-dir", default=None, help="the server's --data-dir (goals are rebuilt locally)")
    parser.add_argument("--num-products", type=int, default=None, help="the server's --num-products")
    parser.add_argument("--human-goals", action="store_true", help="the server uses human goals")
    parser.add_argument("--demos-out", default=None, help="write successful demonstrations (JSON) here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    from agentenv_webshop.environment import WebshopSession, WebshopWorld  # noqa: PLC0415

    if args.server:
        from agentenv_webshop.engine.catalog import load_catalog  # noqa: PLC0415
        from agentenv_webshop.engine.goal import build_goals  # noqa: PLC0415

        catalog = load_catalog(args.data_dir, args.num_products, human_goals=args.human_goals)
        goals = build_goals(catalog.products, human_goals=args.human_goals)
        env: Any = ClientEnv(args.server)
    else:
        world = WebshopWorld.load(args.data_dir, args.num_products, human_goals=args.human_goals)
        goals = world.goals
        env = SessionEnv(WebshopSession(world))
    if args.item_ids:
        from agentenv.item_ids import load_item_id_file, parse_item_id  # noqa: PLC0415

        indices = [parse_item_id(row["item_id"])[1] for row in load_item_id_file(args.item_ids)]
        indices = indices if args.num_goals <= 0 else indices[:args.num_goals]
        if max(indices, default=0) >= len(goals):
            print(f"error: {args.item_ids} names goal {max(indices)} but there are {len(goals)} goals",
                  file=sys.stderr)
            return 2
    else:
        end = len(goals) if args.num_goals <= 0 else min(len(goals), args.start + args.num_goals)
        indices = range(args.start, end)
    if args.server:
        env.reset(indices[0])
        if env.instruction_text() != goals[indices[0]]["instruction_text"]:
            print("error: the server's goals differ from the locally built ones; pass the server's "
                  "--data-dir/--num-products/--human-goals", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    rate, episodes = evaluate(env, goals, indices)
    elapsed = time.perf_counter() - t0
    if args.server:
        env.close()
    steps = sum(len(e.actions) for e in episodes)
    print(f"goals: {len(episodes)}  success (reward >= {SUCCESS_REWARD}): {rate:.4f}  "
          f"found: {sum(e.found for e in episodes) / max(1, len(episodes)):.4f}  "
          f"mean reward: {sum(e.reward for e in episodes) / max(1, len(episodes)):.4f}  "
          f"steps: {steps}  time: {elapsed:.1f}s")
    if args.demos_out:
        import json  # noqa: PLC0415

        with open(args.demos_out, "w", encoding="utf-8") as fh:
            json.dump([to_conversation(e) for e in episodes if e.success], fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
