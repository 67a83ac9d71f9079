"""The shop admin's Marketing > SEO & Search > Search Terms: the grid of what visitors searched, a term's edit
page, a new term and deleting one.

Paths (under `/admin`, Magento's): GET `/search/term/index/` (also `/search/term/`): the grid, `q` keyword,
`sort` = id / query_text / num_results / popularity, `dir` = asc / desc (default: popularity, desc), `p` page;
GET `/search/term/new/`, `/search/term/edit/id/<id>/`; POST `/search/term/save/[id/<id>/]` with Magento's field
names `query_text`, `num_results`, `popularity`, `redirect`, `display_in_terms` (1 / 0); POST
`/search/term/delete/id/<id>/`. Grid rows are `tr.data-row[data-term]` with cells `td.col-query`,
`td.col-results`, `td.col-uses`, `td.col-redirect`. The storefront's search does not count its queries here.
"""
from __future__ import annotations

from typing import Any, Optional

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, query_url, redirect
from agentenv_webarena.sites.shop.admin_layout import (
    PREFIX,
    AdminCtx,
    active_filters,
    admin_page,
    grid,
    like,
    not_found,
    search_form,
)
from agentenv_webarena.sites.shop.model import site_now

__all__ = ["ROUTES", "GRID_PATH", "SORTS"]

GRID_PATH = "/search/term/index/"
_BASE = "/search/term/"
# sort key -> (column, header label)
SORTS = {"id": ("id", "ID"), "query_text": ("query_text", "Search Query"), "num_results": ("num_results", "Results"),
         "popularity": ("popularity", "Uses")}


def _header(key: str, sort: str, direction: str, keyword: str) -> str:
    """A sortable column header: a link that sorts by the column (descending first; again: ascending)."""
    label = SORTS[key][1]
    flip = "asc" if key == sort and direction == "desc" else "desc"
    mark = f" ({'descending' if direction == 'desc' else 'ascending'})" if key == sort else ""
    href = query_url(PREFIX + GRID_PATH, q=keyword or None, sort=key, dir=flip)
    return f'<a href="{esc(href)}" aria-label="Sort by {label}{mark}">{label}</a>'


@login_required
def _terms(ctx: AdminCtx) -> Response:
    keyword = ctx.q.get("q", "").strip()
    sort = ctx.q.get("sort", "popularity") if ctx.q.get("sort") in SORTS else "popularity"
    direction = "asc" if ctx.q.get("dir") == "asc" else "desc"
    sql, args = "SELECT * FROM shop_search_terms", []
    if keyword:
        sql, args = sql + " WHERE query_text LIKE ?", [like(keyword)]
    rows = ctx.conn.execute(f"{sql} ORDER BY {SORTS[sort][0]} {direction}, id", args).fetchall()
    head = [_header("id", sort, direction, keyword), _header("query_text", sort, direction, keyword), "Store View",
            _header("num_results", sort, direction, keyword), _header("popularity", sort, direction, keyword),
            "Redirect URL", "Display in Suggested Terms", "Action"]
    table = grid(ctx, GRID_PATH, rows, {"q": keyword or None, "sort": sort, "dir": direction}, head,
                 lambda t: (f'<tr class="data-row" data-term="{esc(t["query_text"])}"><td>{t["id"]}</td>'
                            f'<td class="col-query">{esc(t["query_text"])}</td><td>Default Store View</td>'
                            f'<td class="col-results">{t["num_results"]}</td><td class="col-uses">{t["popularity"]}'
                            f'</td><td class="col-redirect">{esc(t["redirect"])}</td>'
                            f'<td>{"Yes" if t["display_in_terms"] else "No"}</td><td><a href="{PREFIX}{_BASE}edit/id/'
                            f'{t["id"]}/" aria-label="Edit {esc(t["query_text"])}">Edit</a></td></tr>'),
                 "Search Terms")
    actions = f'<div class="page-actions"><a href="{PREFIX}{_BASE}new/">Add New Search Term</a></div>'
    return admin_page(ctx, "Search Terms", actions + search_form(GRID_PATH, keyword, {"sort": sort, "dir": direction})
                      + active_filters(GRID_PATH, [("Search Query", keyword)]) + table)


def _field(name: str, label: str, value: Any) -> str:
    return (f'<div class="field admin__field" data-index="{name}"><label for="{name}">{label}</label>'
            f'<input id="{name}" type="text" name="{name}" value="{esc(value)}"></div>')


def _form(term: dict, action: str, error: str = "") -> str:
    message = f'<div class="message message-error" role="alert">{esc(error)}</div>' if error else ""
    delete = (f'<form method="post" action="{PREFIX}{_BASE}delete/id/{term["id"]}/"><button type="submit">'
              'Delete Search</button></form>' if term.get("id") else "")
    shown = "".join(f'<option value="{v}"{" selected" if str(term["display_in_terms"]) == v else ""}>{label}</option>'
                    for v, label in (("1", "Yes"), ("0", "No")))
    return (f'{message}<div class="page-actions"><a href="{PREFIX}{GRID_PATH}">Back</a> {delete}</div>'
            f'<form id="search-term-form" method="post" action="{PREFIX}{action}"><fieldset><legend>General '
            'Information</legend>' + _field("query_text", "Search Query", term["query_text"])
            + '<div class="field admin__field"><span>Store: Default Store View</span></div>'
            + _field("num_results", "Number of results", term["num_results"])
            + _field("popularity", "Number of Uses", term["popularity"])
            + _field("redirect", "Redirect URL", term["redirect"])
            + '<div class="field admin__field" data-index="display_in_terms"><label for="display_in_terms">Display '
            f'in Suggested Terms</label><select id="display_in_terms" name="display_in_terms">{shown}</select></div>'
            '</fieldset><button type="submit">Save Search</button></form>')


_NEW = {"id": None, "query_text": "", "num_results": "0", "popularity": "0", "redirect": "", "display_in_terms": 1}


def _term(ctx: AdminCtx, term_id: int) -> Optional[dict]:
    row = ctx.conn.execute("SELECT * FROM shop_search_terms WHERE id = ?", (term_id,)).fetchone()
    return dict(row) if row else None


@login_required
def _new(ctx: AdminCtx) -> Response:
    return admin_page(ctx, "New Search", _form(_NEW, f"{_BASE}save/"))


@login_required
def _edit(ctx: AdminCtx, term_id: int) -> Response:
    term = _term(ctx, term_id)
    if term is None:
        return not_found(ctx, "This search no longer exists.")
    return admin_page(ctx, f'Edit Search "{term["query_text"]}"', _form(term, f"{_BASE}save/id/{term_id}/"))


def _validate(ctx: AdminCtx, term_id: Optional[int]) -> tuple[dict, list[str]]:
    term = {"id": term_id, **{k: ctx.form.get(k, "").strip() for k in ("query_text", "num_results", "popularity",
                                                                        "redirect")},
            "display_in_terms": 0 if ctx.form.get("display_in_terms") == "0" else 1}
    errors = []
    if not term["query_text"]:
        errors.append("The Search Query field is required.")
    elif ctx.conn.execute("SELECT 1 FROM shop_search_terms WHERE query_text = ? AND id != ?",
                          (term["query_text"], term_id or 0)).fetchone():
        errors.append("You already have an identical search term query.")
    for key, label in (("num_results", "Number of results"), ("popularity", "Number of Uses")):
        if not term[key].isdigit():
            errors.append(f"Please enter a whole number of 0 or more in the {label} field.")
    if term["redirect"] and not term["redirect"].startswith(("http://", "https://", "/")):
        errors.append("The Redirect URL must start with http://, https:// or /.")
    return term, errors


@login_required
def _save(ctx: AdminCtx, term_id: Optional[int] = None) -> Response:
    if term_id is not None and _term(ctx, term_id) is None:
        return not_found(ctx, "This search no longer exists.")
    term, errors = _validate(ctx, term_id)
    if errors:
        action = f"{_BASE}save/" + (f"id/{term_id}/" if term_id else "")
        return admin_page(ctx, term["query_text"] or "New Search", _form(term, action, " ".join(errors)),
                          status_code=422)
    values = (term["query_text"], int(term["num_results"]), int(term["popularity"]), term["redirect"],
              term["display_in_terms"], site_now(ctx.conn))
    if term_id is None:
        ctx.conn.execute("INSERT INTO shop_search_terms (query_text, num_results, popularity, redirect, "
                         "display_in_terms, updated_at) VALUES (?, ?, ?, ?, ?, ?)", values)
    else:
        ctx.conn.execute("UPDATE shop_search_terms SET query_text = ?, num_results = ?, popularity = ?, redirect = ?, "
                         "display_in_terms = ?, updated_at = ? WHERE id = ?", (*values, term_id))
    ctx.flash("You saved the search term.")
    return redirect(PREFIX + GRID_PATH)


@login_required
def _delete(ctx: AdminCtx, term_id: int) -> Response:
    if ctx.conn.execute("DELETE FROM shop_search_terms WHERE id = ?", (term_id,)).rowcount:
        ctx.flash("You deleted the search.")
    return redirect(PREFIX + GRID_PATH)


ROUTES = [
    (_BASE, _terms, ("GET",), {}),
    (GRID_PATH, _terms, ("GET",), {}),
    (f"{_BASE}new/", _new, ("GET",), {}),
    (f"{_BASE}edit/id/{{term_id:int}}/", _edit, ("GET",), {}),
    (f"{_BASE}save/", _save, ("POST",), {}),
    (f"{_BASE}save/id/{{term_id:int}}/", _save, ("POST",), {}),
    (f"{_BASE}delete/id/{{term_id:int}}/", _delete, ("POST",), {}),
]
