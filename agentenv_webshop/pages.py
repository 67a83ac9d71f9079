"""WebShop's pages: the "simple" text observation, clickables, simulated URL and (on demand) HTML.

Owns what each page shows (as WebShop's pages do). A page is built once as a list of segments,
``(kind, text, extra)``, in document order; every view derives from that one list:

- `text`: the stripped non-empty segment texts joined with ``" [SEP] "`` (WebShop's 'text' mode);
- `clickables`: an insertion-ordered map built like WebShop's ``get_available_actions``: every
  button's lowercased text, then every product link (lowercased ASIN), then every option value;
  a key seen twice keeps its first position and its LAST target (option values that collide
  across groups: the last group wins);
- `html`: a small HTML page with the same visible text (for ``/state``; rendered only on demand).

Does not own navigation (`environment`) or the reward (`engine.reward`).
"""
from __future__ import annotations

import html as _html
import json
import pprint
from typing import Any, NamedTuple, Sequence
from urllib.parse import quote

__all__ = [
    "Page", "SEP", "PRODUCT_WINDOW", "SUB_PAGES", "BASE_URL",
    "search_page", "results_page", "item_page", "sub_page", "done_page",
    "text", "clickables", "has_search_bar", "html", "format_keywords", "pformat",
    "search_url", "results_url", "item_url", "sub_page_url", "done_url",
]

SEP = " [SEP] "
PRODUCT_WINDOW = 10  # products per results page
SUB_PAGES = ("description", "features", "reviews", "attributes")
BASE_URL = "http://127.0.0.1:3000"

# Segment kinds.
_TEXT, _BUTTON, _LINK, _RADIO, _SEARCH_BAR, _HIDDEN = "text", "button", "link", "radio", "search", "hidden"


class Page(NamedTuple):
    """A rendered page: ``segments`` is a tuple of ``(kind, text, extra)`` in document order."""
    name: str  # 'search', 'results', 'item', 'description', 'features', 'reviews', 'attributes', 'done'
    segments: tuple


def _instruction(instruction_text: str) -> list:
    return [(_TEXT, "Instruction:", None), (_TEXT, instruction_text, None)]


def search_page(instruction_text: str) -> Page:
    """The start page: ``WebShop [SEP] Instruction: [SEP] <instr> [SEP] Search``."""
    segs = [(_TEXT, "WebShop", None), *_instruction(instruction_text), (_SEARCH_BAR, "", None),
            (_BUTTON, "Search", None)]
    return Page("search", tuple(segs))


def results_page(instruction_text: str, page: int, total: int, products: Sequence[dict]) -> Page:
    """A results page: header, ``< Prev`` (page > 1), ``Next >`` (always), then per product ASIN/Title/Price.

    Args:
        instruction_text: the goal instruction.
        page: 1-based page number.
        total: number of hits of the query (shown as ``Total results``).
        products: the products on this page (at most `PRODUCT_WINDOW`).
    """
    segs = [*_instruction(instruction_text), (_BUTTON, "Back to Search", None),
            (_TEXT, f"Page {page} (Total results: {total})", None)]
    if page > 1:
        segs.append((_BUTTON, "< Prev", None))
    segs.append((_BUTTON, "Next >", None))
    for product in products:
        asin = product["asin"].upper()
        segs.append((_LINK, asin, asin))
        segs.append((_TEXT, product.get("Title", ""), None))
        segs.append((_TEXT, product.get("Price", ""), None))
    return Page("results", tuple(segs))


def item_page(instruction_text: str, product: dict, show_attrs: bool = False) -> Page:
    """An item page: option groups, Title, Price, Rating, sub-page buttons, ``Buy Now``."""
    segs = [*_instruction(instruction_text), (_BUTTON, "Back to Search", None), (_BUTTON, "< Prev", None)]
    for option_name, values in (product.get("options") or {}).items():
        segs.append((_TEXT, option_name, None))
        for value in values:
            segs.append((_RADIO, value, option_name))
    segs.append((_TEXT, product.get("Title", ""), None))
    segs.append((_TEXT, f"Price: {product.get('Price', '')}", None))
    segs.append((_TEXT, f"Rating: {product.get('Rating', 'N.A.')}", None))
    for button in ("Description", "Features", "Reviews"):
        segs.append((_BUTTON, button, None))
    if show_attrs:
        segs.append((_BUTTON, "Attributes", None))
    segs.append((_BUTTON, "Buy Now", None))
    return Page("item", tuple(segs))


def sub_page(instruction_text: str, product: dict, name: str) -> Page:
    """A sub-page (``description``, ``features``, ``reviews`` or ``attributes``) of `product`.

    Raises:
        ValueError: if `name` is not one of `SUB_PAGES`.
    """
    if name not in SUB_PAGES:
        raise ValueError(f"unknown sub-page {name!r}; choose one of {list(SUB_PAGES)}")
    segs = [*_instruction(instruction_text), (_BUTTON, "Back to Search", None), (_BUTTON, "< Prev", None)]
    if name == "description":
        content = [product.get("Description", "")]
    elif name == "features":
        content = list(product.get("BulletPoints") or [])
    elif name == "reviews":
        content = []
        for review in product.get("Reviews") or []:
            content += [f'"{review.get("title", "")}"', str(review.get("score", "")), review.get("body", "")]
    else:
        content = [*(product.get("Attributes") or []), product.get("category", ""), product.get("query", ""),
                   product.get("product_category", "")]
    segs += [(_TEXT, c, None) for c in content]
    return Page(name, tuple(segs))


def _tojson(value: Any) -> str:
    # Flask's `tojson` filter: sorted keys, ASCII, and <, >, &, ' escaped for HTML safety.
    out = json.dumps(value, sort_keys=True)
    return (out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("'", "\\u0027"))


def pformat(value: Any) -> str:
    """``pprint.pformat(value)`` (Jinja's ``pprint`` filter), with a fast path for flat scalar dicts."""
    if isinstance(value, dict) and all(isinstance(k, str) for k in value) and all(
            v is None or isinstance(v, (bool, int, float)) for v in value.values()):
        items = [f"{k!r}: {value[k]!r}" for k in sorted(value)]
        one_line = "{" + ", ".join(items) + "}"
        return one_line if len(one_line) <= 80 else "{" + ",\n ".join(items) + "}"
    return pprint.pformat(value)


def done_page(asin: str, options: dict, product: dict, goal: dict | None, reward: float,
              reward_info: dict | None, goal_repr: str | None = None) -> Page:
    """The page after ``Buy Now``, including WebShop's hidden (but text-visible) debug block.

    Args:
        goal_repr: ``pformat(goal)`` if the caller has it cached (it is the costly part).
    """
    goal = goal or {}
    visible = [(_TEXT, "Thank you for shopping with us!", None), (_TEXT, "Your code:", None),
               (_TEXT, "None", None), (_TEXT, "(Paste it in your MTurk interface.)", None)]
    hidden = ["Purchased", "asin", asin, "options", _tojson(options), "attrs", str(product.get("Attributes")),
              "category", str(product.get("category", "")), "query", str(product.get("query", "")),
              "product category", str(product.get("product_category", "")),
              "Target", "asin", str(goal.get("asin", "")), "options", str(goal.get("goal_options", "")),
              "attrs", str(goal.get("attributes", "")), "price upper", str(goal.get("price_upper", "")),
              "instuction text", str(goal.get("instruction_text", "")),  # sic: WebShop's spelling
              "category", str(goal.get("category", "")), "product category", str(goal.get("product_category", "")),
              "query", str(goal.get("query", "")), "Goal", goal_repr if goal_repr is not None else pformat(goal),
              "Reward"]
    tail = [(_TEXT, "Your score (min 0.0, max 1.0)", None), (_TEXT, str(reward), None),
            (_HIDDEN, "Reward Details", None), (_HIDDEN, pformat(reward_info), None)]
    return Page("done", tuple(visible + [(_HIDDEN, h, None) for h in hidden] + tail))


def text(page: Page) -> str:
    """WebShop's 'text' observation: stripped, non-empty segment texts joined by ``" [SEP] "``."""
    parts = []
    for _kind, seg_text, _extra in page.segments:
        seg_text = seg_text.strip()
        if seg_text:
            parts.append(seg_text)
    return SEP.join(parts)


def clickables(page: Page) -> dict[str, tuple]:
    """Insertion-ordered ``{clickable: target}``: buttons, then product links, then option values.

    Targets are ``('button', text)``, ``('asin', ASIN)`` or ``('option', option_name)``. The search
    page's ``search`` button is included (WebShop lists it but rejects ``click[search]``).
    """
    result: dict[str, tuple] = {}
    for kind, seg_text, _extra in page.segments:
        if kind == _BUTTON:
            result[seg_text.strip().lower()] = ("button", seg_text)
    for kind, _seg_text, extra in page.segments:
        if kind == _LINK:
            result[extra.lower()] = ("asin", extra)
    for kind, seg_text, extra in page.segments:
        if kind == _RADIO:
            result[seg_text] = ("option", extra)
    return result


def has_search_bar(page: Page) -> bool:
    """True when the page has WebShop's search input (only the search page)."""
    return any(kind == _SEARCH_BAR for kind, _t, _e in page.segments)


def html(page: Page, url: str = "") -> str:
    """A small HTML rendering of `page` whose visible text nodes give `text(page)`."""
    esc = _html.escape
    body = []
    in_hidden = False  # consecutive hidden segments share one display:none block
    for kind, seg_text, extra in page.segments:
        if (kind == _HIDDEN) != in_hidden:
            body.append('<div style="display:none">' if not in_hidden else "</div>")
            in_hidden = not in_hidden
        if kind in (_TEXT, _HIDDEN):
            body.append(f"<p>{esc(seg_text)}</p>")
        elif kind == _BUTTON:
            body.append(f'<button type="submit" class="btn">{esc(seg_text)}</button>')
        elif kind == _LINK:
            body.append(f'<a class="product-link" href="{esc(url)}#{esc(extra)}">{esc(seg_text)}</a>')
        elif kind == _RADIO:
            body.append(f'<input type="radio" name="{esc(extra)}" value="{esc(seg_text)}">'
                        f"<label>{esc(seg_text)}</label>")
        elif kind == _SEARCH_BAR:
            body.append('<input type="text" id="search_input" name="search_query">')
    if in_hidden:
        body.append("</div>")
    return ("<!DOCTYPE html><html><head><title>WebShop</title></head><body>"
            + "".join(body) + "</body></html>")


# ---- simulated URLs (WebShop's Flask routes on 127.0.0.1:3000) ----

def format_keywords(query: str | None) -> str:
    """URL form of a query: keywords joined with ``+`` and percent-quoted."""
    return quote("+".join((query or "").split(" ")), safe="+")


def _options_json(options: dict | None) -> str:
    return quote(json.dumps(options or {}, sort_keys=True), safe="")


def search_url(session_id: str) -> str:
    """URL of the search page."""
    return f"{BASE_URL}/{session_id}"


def results_url(session_id: str, query: str, page: int) -> str:
    """URL of a results page."""
    return f"{BASE_URL}/search_results/{session_id}/{format_keywords(query)}/{page}"


def item_url(session_id: str, asin: str, query: str, page: int, options: dict | None) -> str:
    """URL of an item page."""
    return f"{BASE_URL}/item_page/{session_id}/{asin}/{format_keywords(query)}/{page}/{_options_json(options)}"


def sub_page_url(session_id: str, asin: str, query: str, page: int, name: str, options: dict | None) -> str:
    """URL of an item sub-page."""
    return (f"{BASE_URL}/item_sub_page/{session_id}/{asin}/{format_keywords(query)}/{page}/"
            f"{name.capitalize()}/{_options_json(options)}")


def done_url(session_id: str, asin: str, options: dict | None) -> str:
    """URL of the done page."""
    return f"{BASE_URL}/done/{session_id}/{asin}/{_options_json(options)}"

