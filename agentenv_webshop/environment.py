"""The WebShop text environment: one shared `WebshopWorld` per process, one small `WebshopSession` each.

Owns navigation and the action grammar (WebShop's): ``search[...]`` from any page,
``click[...]`` on a current clickable (never ``search``), ``buy now`` ends the episode with the
WebShop reward. An invalid action is a silent no-op (same page, reward 0, not done); the caller
(server/client) words the "invalid action" message, and ``info`` says why. `WebshopSession` follows the
server kit's `Session` contract (typed `ResetResult` / `StepResult`).

Does not own: catalog/goal/search construction (`engine`), page text (`pages`), reward (`engine.reward`),
HTTP (`server`).
"""
from __future__ import annotations

import functools
import logging
import random
import threading
from typing import Any, Sequence

from agentenv.controller.types import ResetResult, StepResult
from agentenv_webshop import pages
from agentenv_webshop.engine.reward import get_reward

__all__ = ["WebshopWorld", "WebshopSession", "parse_action", "SEARCH_RETURN_N"]

logger = logging.getLogger(__name__)

SEARCH_RETURN_N = 50  # hits kept per query (5 pages of 10)
_SEARCH_CACHE_SIZE = 2048  # queries; ~0.6 KB each, so the cache stays ~1 MB per process
_SEARCH_CACHE_MAX_QUERY = 256  # longer queries are searched every time (they rarely repeat)
_NAV_BUTTONS = frozenset({"back to search", "next >", "< prev", "buy now", *pages.SUB_PAGES})


def parse_action(action: str) -> tuple[str, str | None]:
    """Split ``name[arg]`` exactly like WebShop's ``re.match(r'(.+)\\[(.+)\\]', action)``, arg lowercased.

    Computed in linear time (the backtracking regex is quadratic on long strings full of ``[``):
    the match lies in the first line; the greedy name ends at the last ``[`` (not at position 0)
    that has a ``]`` at least two characters later, and the greedy argument runs to the last ``]``.

    Returns:
        ``(name, arg)``; without a match the whole string is the name and arg is None.
    """
    line = action.split("\n", 1)[0]
    close = line.rfind("]")
    open_ = line.rfind("[", 1, close - 1) if close >= 3 else -1
    if open_ < 0:
        return action, None
    return line[:open_], line[open_ + 1:close].lower()


class WebshopWorld:
    """Everything sessions share: products by ASIN, goals, the search engine, a seeded sampler.

    Build it with `WebshopWorld.load` (catalog + index + goals, memoised per process) or directly
    from in-memory parts (tests, custom catalogs).

    Args:
        products: product dicts (WebShop shape) or a mapping ``{ASIN: product}``.
        goals: goal dicts in goal-index order.
        search_engine: object with ``search(query: str, k: int) -> list[str]`` (uppercase ASINs).
        show_attrs: show WebShop's optional ``Attributes`` button/sub-page.
        seed: seed of the goal sampler used by ``reset(None)``.
        catalog: the loaded catalog object, kept for callers (``.catalog``).
    """

    _shared: dict[tuple, "WebshopWorld"] = {}
    _shared_lock = threading.Lock()

    def __init__(self, products: Sequence[dict] | dict, goals: Sequence[dict], search_engine: Any,
                 show_attrs: bool = False, seed: int = 0, catalog: Any = None):
        if isinstance(products, dict):
            self.by_asin = products
        else:
            self.by_asin = {p["asin"].upper(): p for p in products}
        self.goals = list(goals)
        self.search_engine = search_engine
        self.show_attrs = show_attrs
        self.catalog = catalog
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._search_cached = functools.lru_cache(maxsize=_SEARCH_CACHE_SIZE)(self._search_uncached)
        self._goal_reprs: dict[int, str] = {}
        self._goal_cum_weights: list[float] | None = None

    @classmethod
    def load(cls, data_dir: str | None = None, num_products: int | None = None, human_goals: bool = False,
             cache_dir: str | None = None, show_attrs: bool = False, seed: int = 0) -> "WebshopWorld":
        """Load (once per process and argument set) the catalog, search index and goals.

        Args:
            data_dir: folder with WebShop's data files; None loads the embedded catalog.
            num_products: keep only the first N products.
            human_goals: build goals from human instructions instead of synthetic ones.
            cache_dir: where the search index is cached (None: the search engine's default).
            show_attrs: show the optional ``Attributes`` button.
            seed: seed of the ``reset(None)`` goal sampler.
        """
        key = (data_dir, num_products, human_goals, cache_dir, show_attrs, seed)
        with cls._shared_lock:
            world = cls._shared.get(key)
            if world is None:
                from agentenv_webshop.engine.catalog import load_catalog  # noqa: PLC0415 - heavy, lazy
                from agentenv_webshop.engine.goal import build_goals  # noqa: PLC0415
                from agentenv_webshop.engine.search import SearchEngine  # noqa: PLC0415

                catalog = load_catalog(data_dir=data_dir, num_products=num_products, human_goals=human_goals)
                engine = SearchEngine.build(catalog.products, cache_dir=cache_dir)
                goals = build_goals(catalog.products, human_goals=human_goals)
                world = cls(catalog.by_asin, goals, engine, show_attrs=show_attrs, seed=seed, catalog=catalog)
                logger.info("WebShop world: %d products, %d goals (source %s)",
                            len(world.by_asin), world.num_goals, getattr(catalog, "source", "?"))
                cls._shared[key] = world
        return world

    @property
    def num_goals(self) -> int:
        """Number of goals; valid goal indices are ``0 .. num_goals - 1``."""
        return len(self.goals)

    def sample_goal_index(self) -> int:
        """A goal index drawn by goal weight from the world's seeded generator (thread-safe)."""
        from agentenv_webshop.engine.goal import goal_cum_weights, sample_goal_index  # noqa: PLC0415

        with self._rng_lock:
            if self._goal_cum_weights is None:
                self._goal_cum_weights = goal_cum_weights(self.goals)
            return sample_goal_index(self.goals, self._rng, self._goal_cum_weights)

    def goal_repr(self, goal_index: int) -> str:
        """``pprint.pformat`` of a goal (shown on the done page), computed once per goal."""
        text = self._goal_reprs.get(goal_index)
        if text is None:
            text = self._goal_reprs[goal_index] = pages.pformat(self.goals[goal_index])
        return text

    def search(self, query: str) -> tuple[str, ...]:
        """Top `SEARCH_RETURN_N` ASINs for `query` that exist in the catalog (LRU-cached per world)."""
        if len(query) > _SEARCH_CACHE_MAX_QUERY:
            return self._search_uncached(query)
        return self._search_cached(query)

    def _search_uncached(self, query: str) -> tuple[str, ...]:
        hits = self.search_engine.search(query, k=SEARCH_RETURN_N)
        by_asin = self.by_asin
        # Reuse the catalog's ASIN objects so cached hit lists share strings with the products.
        return tuple(by_asin[a]["asin"] for a in (h.upper() for h in hits) if a in by_asin)


class WebshopSession:
    """One agent's WebShop session: the goal and where it is. Creating one loads nothing.

    Pages are re-rendered from this small state on demand; nothing large is stored.
    """

    __slots__ = ("world", "session_id", "goal_index", "_goal", "_page", "_query", "_page_num",
                 "_asin", "_options", "_done", "_reward")

    def __init__(self, world: WebshopWorld):
        self.world = world
        self.session_id = ""
        self.goal_index: int | None = None
        self._goal: dict | None = None
        self._page = "search"  # search | results | item | description | features | reviews | attributes | done
        self._query: str | None = None
        self._page_num = 1
        self._asin: str | None = None
        self._options: dict | None = None
        self._done = False
        self._reward = 0.0

    # ---- lifecycle ----
    def reset(self, session_id: int | None = None) -> ResetResult:
        """Start an episode on goal `session_id` (an index) or, with None, a weighted random goal.

        Returns:
            The search-page observation (`ResetResult.observation`).

        Raises:
            ValueError: if the index is outside ``0 .. num_goals - 1``.
            TypeError: if `session_id` is neither an int nor None.
        """
        num_goals = self.world.num_goals
        if session_id is None:
            idx = self.world.sample_goal_index()
        elif isinstance(session_id, bool) or not isinstance(session_id, int):
            raise TypeError(f"session_id must be an int goal index or None, got {type(session_id).__name__}")
        elif not 0 <= session_id < num_goals:
            raise ValueError(f"session_id {session_id} is out of range: valid goal indices are "
                             f"0..{num_goals - 1} ({num_goals} goals)")
        else:
            idx = session_id
        self.goal_index = idx
        self._goal = self.world.goals[idx]
        self.session_id = f"fixed_{idx}"
        self._to_search_page()
        self._done = False
        self._reward = 0.0
        return ResetResult(observation=self.observation)

    def observe(self) -> str:
        """The current page as WebShop 'text' observation (the `Session` contract's name)."""
        return self.observation

    def close(self) -> None:
        """Nothing to free: a session is a few fields over the shared world."""

    # ---- read-only views ----
    @property
    def goal(self) -> dict | None:
        """The current goal dict (shared with the world; do not mutate), None before reset."""
        return self._goal

    @property
    def instruction_text(self) -> str:
        """The goal instruction ('' before reset)."""
        return self._goal["instruction_text"] if self._goal is not None else ""

    @property
    def done(self) -> bool:
        """True once ``click[buy now]`` ended the episode."""
        return self._done

    @property
    def reward(self) -> float:
        """The purchase reward (0 until done)."""
        return self._reward

    @property
    def observation(self) -> str:
        """The current page as WebShop 'text' observation."""
        return pages.text(self._render())

    def available_actions(self) -> dict:
        """``{"has_search_bar": bool, "clickables": [str, ...]}`` for the current page."""
        page = self._render()
        return {"has_search_bar": pages.has_search_bar(page), "clickables": list(pages.clickables(page))}

    def state(self) -> dict:
        """``{"url", "html", "instruction_text"}`` (HTML rendered now, on demand)."""
        url = self.url
        return {"url": url, "html": pages.html(self._render(), url), "instruction_text": self.instruction_text}

    @property
    def url(self) -> str:
        """The simulated WebShop URL of the current page."""
        sid, page = self.session_id, self._page
        if page == "search":
            return pages.search_url(sid)
        if page == "results":
            return pages.results_url(sid, self._query, self._page_num)
        if page == "item":
            return pages.item_url(sid, self._asin, self._query, self._page_num, self._options)
        if page == "done":
            return pages.done_url(sid, self._asin, self._options)
        return pages.sub_page_url(sid, self._asin, self._query, self._page_num, page, self._options)

    # ---- acting ----
    def step(self, action: str) -> StepResult:
        """Apply one WebShop action.

        Returns:
            A `StepResult`: the new page, the reward (the purchase score once ``click[buy now]``
            ended the episode, else 0), ``terminated`` (= done) and ``info``: None for a valid action,
            ``{"valid": False, "reason": str}`` for an invalid one (a no-op: same page, reward 0).
        """
        if self._goal is None:
            return self._invalid("the session has no goal yet: call reset first")
        if self._done:
            return self._invalid("the episode is over (the product was bought): call reset")
        if not isinstance(action, str):
            return self._invalid(f"the action must be a string, got {type(action).__name__}")
        name, arg = parse_action(action)
        if name == "search":
            return self._search(arg)
        if name != "click":
            if arg is None:
                return self._invalid("not of the form search[keywords] or click[element]")
            return self._invalid(f"unknown action {name!r}: use search[...] or click[...]")
        targets = pages.clickables(self._render())
        if arg not in targets or arg == "search":
            return self._invalid(f"{arg!r} is not clickable on this page")
        return self._click(arg, targets[arg])

    def _invalid(self, reason: str) -> StepResult:
        return StepResult(self.observation, 0.0, self._done, info={"valid": False, "reason": reason})

    def _ok(self) -> StepResult:
        return StepResult(self.observation, self._reward if self._done else 0.0, self._done)

    def _search(self, arg: str) -> StepResult:
        self._query = " ".join(arg.split(" "))
        self._page = "results"
        self._page_num = 1
        self._asin = None
        self._options = None
        return self._ok()

    def _click(self, name: str, target: tuple) -> StepResult:
        page = self._page
        if name in _NAV_BUTTONS:  # named buttons route by name, as in WebShop, even if a value collides
            if name == "back to search":
                self._to_search_page()
            elif name == "next >":
                self._page_num += 1
            elif name == "< prev":
                if page == "results":
                    self._page_num -= 1
                elif page == "item":
                    self._page = "results"
                    self._asin = None
                    self._options = None
                else:  # a sub-page: back to the item page, options kept
                    self._page = "item"
            elif name == "buy now":
                self._buy()
            else:
                self._page = name
        elif target[0] == "asin":
            self._page = "item"
            self._asin = target[1]
            self._options = None
        else:  # an option value of the item page; colliding values use the last group
            options = dict(self._options or {})
            options[target[1]] = name
            self._options = options
        return self._ok()

    def _buy(self) -> None:
        product = self.world.by_asin[self._asin]
        self._reward = float(get_reward(product, self._goal, price=product["product_price"],
                                        purchased_options=self._options or {}))
        self._done = True
        self._page = "done"

    def _to_search_page(self) -> None:
        self._page = "search"
        self._query = None
        self._page_num = 1
        self._asin = None
        self._options = None

    # ---- rendering ----
    def _render(self) -> pages.Page:
        page, instruction = self._page, self.instruction_text
        if page == "search":
            return pages.search_page(instruction)
        if page == "results":
            hits = self.world.search(self._query)
            start = (self._page_num - 1) * pages.PRODUCT_WINDOW
            by_asin = self.world.by_asin
            shown = [by_asin[a] for a in hits[start:start + pages.PRODUCT_WINDOW]] if start >= 0 else []
            return pages.results_page(instruction, self._page_num, len(hits), shown)
        product = self.world.by_asin[self._asin]
        if page == "item":
            return pages.item_page(instruction, product, show_attrs=self.world.show_attrs)
        if page == "done":
            _reward, info = get_reward(product, self._goal, price=product["product_price"],
                                       purchased_options=self._options or {}, verbose=True)
            return pages.done_page(self._asin, self._options or {}, product, self._goal, self._reward, info,
                                   goal_repr=self.world.goal_repr(self.goal_index))
        return pages.sub_page(instruction, product, page)
