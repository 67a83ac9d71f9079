"""The shop admin's Content menu: CMS pages (grid, edit, save) and the design themes (grid, theme page).

A page's form has Magento's field names: `is_active`, `title` (Page Title), `content_heading`,
`content`, `identifier` (URL Key, unique). Themes are Magento's three built-in ones (blank, backend,
Luma; ids as Magento's), shown read-only as Magento shows physical themes; the grid lists the
storefront themes.
"""
from __future__ import annotations

import re

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, redirect
from agentenv_webarena.sites.shop.admin_layout import PREFIX, AdminCtx, admin_page, grid, not_found
from agentenv_webarena.sites.shop.model import long_date, site_now

__all__ = ["ROUTES", "THEMES"]

# id -> (title, path, parent id, area); Magento's ids
THEMES = {1: ("Magento Blank", "Magento/blank", None, "frontend"),
          2: ("Magento 2 backend", "Magento/backend", None, "adminhtml"),
          3: ("Magento Luma", "Magento/luma", 1, "frontend")}
_IDENTIFIER = re.compile(r"^[a-z0-9][a-z0-9_-]{0,99}$")


@login_required
def _pages(ctx: AdminCtx) -> Response:
    rows = ctx.conn.execute("SELECT * FROM shop_cms_pages ORDER BY id").fetchall()
    table = grid(ctx, "/cms/page/", rows, {}, ["ID", "Title", "URL Key", "Status", "Created", "Modified", "Action"],
                 lambda r: (f'<tr><td>{r["id"]}</td><td>{esc(r["title"])}</td><td>{esc(r["identifier"])}</td>'
                            f'<td>{"Enabled" if r["is_active"] else "Disabled"}</td><td>{long_date(r["created_at"])}'
                            f'</td><td>{long_date(r["updated_at"])}</td><td><a href="{PREFIX}/cms/page/edit/page_id/'
                            f'{r["id"]}/" aria-label="Edit {esc(r["title"])}">Edit</a></td></tr>'),
                 "Pages")
    return admin_page(ctx, "Pages", table)


def _page_form(page: dict, error: str = "") -> str:
    message = f'<div class="message message-error" role="alert">{esc(error)}</div>' if error else ""
    fields = "".join(f'<div class="field admin__field" data-index="{name}"><label for="cms_{name}">{label}</label>'
                     f'<input id="cms_{name}" type="text" name="{name}" value="{esc(page[name])}"></div>'
                     for name, label in (("title", "Page Title"), ("content_heading", "Content Heading"),
                                         ("identifier", "URL Key")))
    return (f'{message}<div class="page-actions"><a href="{PREFIX}/cms/page/">Back</a></div>'
            f'<form id="cms_page_form" method="post" action="{PREFIX}/cms/page/save/page_id/{page["id"]}/">'
            '<div class="field admin__field" data-index="is_active"><label><input type="checkbox" name="is_active" '
            f'value="1"{" checked" if page["is_active"] else ""}> Enable Page</label></div>{fields}'
            '<div class="field admin__field" data-index="content"><label for="cms_content">Content</label><textarea '
            f'id="cms_content" name="content" rows="6" cols="60">{esc(page["content"])}</textarea></div>'
            '<button type="submit">Save</button></form>')


@login_required
def _page_edit(ctx: AdminCtx, page_id: int) -> Response:
    row = ctx.conn.execute("SELECT * FROM shop_cms_pages WHERE id = ?", (page_id,)).fetchone()
    if row is None:
        return not_found(ctx, "This page no longer exists.")
    return admin_page(ctx, row["title"], _page_form(dict(row)))


@login_required
def _page_save(ctx: AdminCtx, page_id: int) -> Response:
    row = ctx.conn.execute("SELECT * FROM shop_cms_pages WHERE id = ?", (page_id,)).fetchone()
    if row is None:
        return not_found(ctx, "This page no longer exists.")
    page = dict(row)
    for key in ("title", "content_heading", "identifier", "content"):
        page[key] = ctx.form.get(key, page[key]).strip()
    page["is_active"] = 1 if ctx.form.get("is_active") else 0
    errors = []
    if not page["title"]:
        errors.append("The Page Title field is required.")
    if not _IDENTIFIER.match(page["identifier"]):
        errors.append("The URL Key has lower-case letters, digits, - and _ only.")
    elif ctx.conn.execute("SELECT 1 FROM shop_cms_pages WHERE identifier = ? AND id != ?",
                          (page["identifier"], page_id)).fetchone():
        errors.append("A page URL key for specified store already exists.")
    if errors:
        return admin_page(ctx, row["title"], _page_form(page, " ".join(errors)), status_code=422)
    ctx.conn.execute("UPDATE shop_cms_pages SET title = ?, content_heading = ?, identifier = ?, content = ?, "
                     "is_active = ?, updated_at = ? WHERE id = ?",
                     (page["title"], page["content_heading"], page["identifier"], page["content"], page["is_active"],
                      site_now(ctx.conn), page_id))
    ctx.flash("You saved the page.")
    return redirect(f"{PREFIX}/cms/page/edit/page_id/{page_id}/")


@login_required
def _themes(ctx: AdminCtx) -> Response:
    rows = [(i, t) for i, t in THEMES.items() if t[3] == "frontend"]
    table = grid(ctx, "/admin/system_design_theme/", rows, {}, ["Theme Title", "Parent Theme", "Theme Path", "Action"],
                 lambda r: (f'<tr><td>{r[1][0]}</td><td>{THEMES[r[1][2]][0] if r[1][2] else ""}</td><td>{r[1][1]}</td>'
                            f'<td><a href="{PREFIX}/admin/system_design_theme/edit/id/{r[0]}/" '
                            f'aria-label="Edit {r[1][0]}">Edit</a></td></tr>'),
                 "Themes")
    return admin_page(ctx, "Themes", table)


@login_required
def _theme(ctx: AdminCtx, theme_id: int, key: str = "") -> Response:
    if theme_id not in THEMES:
        return not_found(ctx, "We can't find theme.")
    title, path, parent, area = THEMES[theme_id]
    rows = (("Parent Theme", THEMES[parent][0] if parent else "N/A"), ("Theme Path", path),
            ("Theme Version", "2.4.6"), ("Theme Title", title), ("Area", area))
    body = "".join(f"<tr><th>{label}</th><td>{esc(value)}</td></tr>" for label, value in rows)
    main = (f'<div class="page-actions"><a href="{PREFIX}/admin/system_design_theme/">Back</a></div>'
            f'<section id="theme_edit"><h2>General Settings</h2><table><tbody>{body}</tbody></table>'
            '<p>This theme is read-only: it ships with the store.</p></section>')
    return admin_page(ctx, f"Theme: {title}", main)


ROUTES = [
    ("/cms/page/", _pages, ("GET",), {}),
    ("/cms/page/index/", _pages, ("GET",), {}),
    ("/cms/page/edit/page_id/{page_id:int}/", _page_edit, ("GET",), {}),
    ("/cms/page/save/page_id/{page_id:int}/", _page_save, ("POST",), {}),
    ("/admin/system_design_theme/", _themes, ("GET",), {}),
    ("/admin/system_design_theme/edit/id/{theme_id:int}/", _theme, ("GET",), {}),
    ("/admin/system_design_theme/edit/id/{theme_id:int}/key/", _theme, ("GET",), {}),
    ("/admin/system_design_theme/edit/id/{theme_id:int}/key/{key}/", _theme, ("GET",), {}),
]
