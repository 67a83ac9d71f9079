"""The shop admin's catalog: the products grid, a product's edit page and the new-product page.

The product form has Magento's field names: `product[status]` (a toggle whose value is 1 enabled / 2
disabled; checked = enabled), `product[name]`, `product[sku]`, `product[price]`,
`product[quantity_and_stock_status][qty]`, `product[quantity_and_stock_status][is_in_stock]` (1 In Stock /
0 Out of Stock), `product[category_ids]` in `[data-index="category_ids"]` (the chosen category is its
`[data-role="selected-option"]`), `product[size]` / `product[color]` (Magento's attribute option ids) on a
product with at most one size and colour, `product[sale]` (a yes/no toggle, value 1 / 0), Advanced Pricing
(`details#advanced-pricing`: `product[special_price]`, `product[special_from_date]`, `product[special_to_date]`,
MM/DD/YYYY; inputs `#product-special-price`, `#product-special-from`, `#product-special-to`), and the
Configurations section `[data-index="configurable"]`: the variants `<name>-<size>-<color>` with the
product's sizes and colours as comma lists (`product[configurable][sizes]`, `...[colors]`). Saving
validates and answers the edit page again with what is wrong.
"""
from __future__ import annotations

import re
import sqlite3
from typing import Any, Optional

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, redirect
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
from agentenv_webarena.sites.shop.admin_reports import parse_report_date
from agentenv_webarena.sites.shop.model import in_stock, money, next_product_id, product_options, slugify

__all__ = ["ROUTES", "SIZE_OPTION_IDS", "COLOR_OPTION_IDS", "variants"]

# Magento's option ids of its `size` and `color` attributes (sample data), ours appended after them.
SIZE_OPTION_IDS = {"XS": 166, "S": 167, "M": 168, "L": 169, "XL": 170, "28": 171, "29": 172, "30": 173, "31": 174,
                   "32": 175, "33": 176, "34": 177, "36": 178, "38": 179, "6": 180, "7": 181, "8": 182, "9": 183,
                   "10": 184, "11": 185}
COLOR_OPTION_IDS = {"Black": 49, "Blue": 50, "Brown": 51, "Gray": 52, "Green": 53, "Lavender": 54, "Multi": 55,
                    "Orange": 56, "Purple": 57, "Red": 58, "White": 59, "Yellow": 60, "Pink": 61, "Navy": 62,
                    "Beige": 63}
_OPTION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 .]{0,19}$")
NEW_PRODUCT_PATH = "/catalog/product/new/set/4/type/simple/"


def variants(p: Any) -> list[tuple[str, str, str, str]]:
    """A product's configurations: (name, SKU, size, colour), Magento's `<name>-<size>-<color>` children."""
    sizes, colors = product_options(p)
    out = []
    for size in sizes or [""]:
        for color in colors or [""]:
            suffix = "".join(f"-{v}" for v in (size, color) if v)
            if suffix:
                out.append((p["name"] + suffix, p["sku"] + suffix, size, color))
    return out


@login_required
def _products(ctx: AdminCtx) -> Response:
    keyword = ctx.q.get("q", "").strip()
    sql = "SELECT * FROM shop_products"
    args: list[Any] = []
    if keyword:
        sql += " WHERE name LIKE ? OR sku LIKE ?"
        args = [like(keyword)] * 2
    rows = ctx.conn.execute(sql + " ORDER BY id", args).fetchall()
    table = grid(ctx, "/catalog/product/", rows, {"q": keyword or None},
                 ["ID", "Name", "SKU", "Price", "Quantity", "Status", "Action"],
                 lambda p: (f'<tr><td>{p["id"]}</td><td>{esc(p["name"])}</td><td>{esc(p["sku"])}</td>'
                            f'<td>{money(p["price"])}</td><td>{p["qty"]}</td>'
                            f'<td>{"Enabled" if p["enabled"] else "Disabled"}</td><td><a href="{PREFIX}/catalog/'
                            f'product/edit/id/{p["id"]}/" aria-label="Edit {esc(p["name"])}">Edit</a></td></tr>'),
                 "Products")
    actions = (f'<div class="page-actions"><a id="add_new_product-button" href="{PREFIX}{NEW_PRODUCT_PATH}">'
               'Add Product</a></div>')
    return admin_page(ctx, "Products", actions + search_form("/catalog/product/", keyword)
                      + active_filters("/catalog/product/", [("Keyword", keyword)]) + table)


def _toggle(name: str, label: str, on: bool, values: tuple[str, str]) -> str:
    """Magento's switch: a checkbox whose value is the field's value (`values` = (on, off))."""
    return (f'<div class="field admin__field" data-index="{esc(name[8:-1])}"><label><input type="checkbox" '
            f'name="{name}" value="{values[0] if on else values[1]}" '
            f'onchange="this.value=this.checked?\'{values[0]}\':\'{values[1]}\'"{" checked" if on else ""}> '
            f'{label}</label></div>')


def _text(field: str, ident: str, label: str, value: str) -> str:
    return (f'<div class="field"><label for="{ident}">{label}</label><input id="{ident}" type="text" '
            f'name="{field}" value="{esc(value)}"></div>')


def _select(field: str, ident: str, label: str, options: list[tuple[str, str]], chosen: str, *,
            index: str = "", placeholder: str = "") -> str:
    """A select; the chosen option (or the placeholder) carries `data-role="selected-option"`."""
    opts = [("", placeholder)] if placeholder else []
    opts += options
    if not any(value == chosen for value, _ in opts):
        chosen = opts[0][0]
    picked = ' selected data-role="selected-option"'
    html = "".join(f'<option value="{esc(value)}"{picked if value == chosen else ""}>{esc(text)}</option>'
                   for value, text in opts)
    wrap = f' data-index="{index}"' if index else ""
    return (f'<div class="field admin__field"{wrap}><label for="{ident}">{label}</label>'
            f'<select id="{ident}" name="{field}">{html}</select></div>')


def _option_choices(ids: dict[str, int], extra: list[str]) -> list[tuple[str, str]]:
    names = list(ids) + [v for v in extra if v not in ids]
    return [(str(ids.get(n, n)), n) for n in names]


def _advanced_pricing(v: dict) -> str:
    """Magento's Advanced Pricing: the special price and the dates it applies from and to (MM/DD/YYYY)."""
    special = v.get("special_price")
    special = f"{special:.2f}" if isinstance(special, float) else "" if special is None else str(special)
    dates = {k: _us_date(v.get(k) or "") for k in ("special_from", "special_to")}
    return ('<details id="advanced-pricing" data-index="advanced_pricing"><summary>Advanced Pricing</summary>'
            + _text("product[special_price]", "product-special-price", "Special Price", special)
            + _text("product[special_from_date]", "product-special-from", "Special Price From", dates["special_from"])
            + _text("product[special_to_date]", "product-special-to", "Special Price To", dates["special_to"])
            + "</details>")


def _us_date(iso: str) -> str:
    """'YYYY-MM-DD' as the admin's 'MM/DD/YYYY' (other text as it is)."""
    return f"{iso[5:7]}/{iso[8:10]}/{iso[:4]}" if len(iso) == 10 and iso[4] == "-" else iso


def _special(ctx: AdminCtx, old: dict, new: dict, errors: list[str]) -> None:
    """The posted Advanced Pricing into `new` (fields not posted keep `old`); what is wrong into `errors`."""
    f = ctx.form
    raw = f.get("product[special_price]")
    if raw is None:
        new["special_price"] = old.get("special_price")
    elif not raw.strip():
        new["special_price"] = None
    else:
        try:
            new["special_price"] = round(float(raw.replace("$", "").replace(",", "")), 2)
            if new["special_price"] < 0:
                raise ValueError
        except ValueError:
            errors.append("Please enter a valid number of 0 or more in the Special Price field.")
    for key, field, label in (("special_from", "product[special_from_date]", "Special Price From"),
                              ("special_to", "product[special_to_date]", "Special Price To")):
        raw = f.get(field)
        text = (raw if raw is not None else _us_date(old.get(key) or "")).strip()
        new[key] = parse_report_date(text) if text else ""
        if text and not new[key]:
            errors.append(f"Please enter a valid date in the {label} field.")
    if new["special_from"] and new["special_to"] and new["special_from"] > new["special_to"]:
        errors.append("The Special Price From date must not be after the To date.")


def _product_form(ctx: AdminCtx, p: Optional[dict], action: str) -> str:
    """The product form, filled from `p` (a row or the posted values), or empty for a new product."""
    v = dict(p) if p is not None else {"enabled": 1, "name": "", "sku": "", "price": "", "qty": "", "stock_status": 1,
                                       "category_id": "", "sizes": "", "colors": "", "sale": 0, "description": ""}
    sizes, colors = product_options(v)
    price = f'{v["price"]:.2f}' if isinstance(v["price"], float) else str(v["price"])
    categories = ctx.conn.execute("SELECT id, name FROM shop_categories ORDER BY position").fetchall()
    stock = "1" if (in_stock(v) if isinstance(v["qty"], int) else v["stock_status"]) else "0"
    fields = (_toggle("product[status]", "Enable Product", bool(v["enabled"]), ("1", "2"))
              + _text("product[name]", "product-name", "Product Name", v["name"])
              + _text("product[sku]", "product-sku", "SKU", v["sku"])
              + _text("product[price]", "product-price", "Price", price)
              + _advanced_pricing(v)
              + _text("product[quantity_and_stock_status][qty]", "product-qty", "Quantity", str(v["qty"]))
              + _select("product[quantity_and_stock_status][is_in_stock]", "product-stock", "Stock Status",
                        [("1", "In Stock"), ("0", "Out of Stock")], stock)
              + _select("product[category_ids]", "product-category", "Categories",
                        [(str(c["id"]), c["name"]) for c in categories], str(v["category_id"]),
                        index="category_ids", placeholder="Select..."))
    simple = len(sizes) <= 1 and len(colors) <= 1
    if simple:
        fields += (_select("product[size]", "product-size", "Size", _option_choices(SIZE_OPTION_IDS, sizes),
                           str(SIZE_OPTION_IDS.get(sizes[0], sizes[0])) if sizes else "", placeholder=" ")
                   + _select("product[color]", "product-color", "Color", _option_choices(COLOR_OPTION_IDS, colors),
                             str(COLOR_OPTION_IDS.get(colors[0], colors[0])) if colors else "", placeholder=" "))
    fields += _toggle("product[sale]", "Sale", bool(v["sale"]), ("1", "0"))
    rows = "".join(f'<tr><td>{esc(name)}</td><td>{esc(sku)}</td><td>{money(v["price"]) if price else ""}</td>'
                   f'<td>{esc(", ".join(f"{k}: {x}" for k, x in (("Size", size), ("Color", color)) if x))}</td></tr>'
                   for name, sku, size, color in (variants(v) if not simple else []))
    lists = (_text("product[configurable][sizes]", "configurable-sizes", "Sizes", ",".join(sizes) if not simple else "")
             + _text("product[configurable][colors]", "configurable-colors", "Colors",
                     ",".join(colors) if not simple else ""))
    if simple:
        configurable = ('<p>Configurable products allow customers to choose options (Ex: shirt color). You need to '
                        'create a simple product for each configuration (Ex: a product for each color).</p>'
                        f'<details><summary>Create Configurations</summary>{lists}</details>')
    else:
        configurable = ('<table class="data-grid"><caption>Current Variations</caption><thead><tr><th>Name</th>'
                        f'<th>SKU</th><th>Price</th><th>Attributes</th></tr></thead><tbody>{rows}</tbody></table>'
                        f'{lists}')
    content = ('<details id="product-content"><summary>Content</summary>'
               f'<p id="description-preview">Current description: {esc(v["description"])}</p>'
               '<div class="field"><label for="product-description">Description</label><textarea '
               f'id="product-description" name="product[description]" rows="4" cols="60">{esc(v["description"])}'
               '</textarea></div></details>')
    return (f'<div class="page-actions"><a href="{PREFIX}/catalog/product/">Back</a></div>'
            f'<form id="product-form" method="post" action="{PREFIX}{action}">{fields}'
            f'<section class="fieldset-wrapper" data-index="configurable"><h2>Configurations</h2>{configurable}'
            f'</section>{content}<button type="submit">Save</button></form>')


def _product_row(ctx: AdminCtx, product_id: int) -> Optional[sqlite3.Row]:
    return ctx.conn.execute("SELECT * FROM shop_products WHERE id = ?", (product_id,)).fetchone()


@login_required
def _product_edit(ctx: AdminCtx, product_id: int) -> Response:
    p = _product_row(ctx, product_id)
    if p is None:
        return not_found(ctx, "This product no longer exists.")
    return admin_page(ctx, p["name"], _product_form(ctx, p, f"/catalog/product/save/id/{p['id']}/"))


@login_required
def _product_new(ctx: AdminCtx, attribute_set: int, product_type: str) -> Response:
    if product_type not in ("simple", "configurable", "virtual"):
        return not_found(ctx, "This product type is not available.")
    return admin_page(ctx, "New Product", _product_form(ctx, None, "/catalog/product/save/"))


def _option_list(ctx: AdminCtx, kind: str, ids: dict[str, int], current: list[str]) -> tuple[list[str], str]:
    """The posted sizes or colours: the configurations' list when given, else the single select; (values, error)."""
    listed = ctx.form.get(f"product[configurable][{kind}s]")
    if listed is not None and listed.strip():
        values = []
        for raw in listed.split(","):
            value = raw.strip().title() if kind == "color" else raw.strip().upper() if raw.strip().isalpha() \
                else raw.strip()
            if not _OPTION.match(value):
                return current, f"{value or 'An empty value'} is not a valid {kind}."
            if value not in values:
                values.append(value)
        return values, ""
    chosen = ctx.form.get(f"product[{kind}]")
    if chosen is not None:
        names = {str(i): n for n, i in ids.items()}
        if chosen and chosen not in names and chosen not in current:
            return current, f"Please select a valid {kind}."
        return ([names.get(chosen, chosen)] if chosen else []), ""
    return ([] if listed is not None else current), ""


def _posted(ctx: AdminCtx, old: dict) -> tuple[dict, list[str]]:
    """The product's values after the posted form (fields not posted keep `old`), and what is wrong."""
    f = ctx.form
    errors = []
    new = dict(old)
    new["name"] = f.get("product[name]", old["name"]).strip()
    new["sku"] = f.get("product[sku]", old["sku"]).strip() or new["name"]
    new["description"] = f.get("product[description]", old["description"])
    new["enabled"] = 1 if f.get("product[status]") else 0
    new["sale"] = 1 if f.get("product[sale]") else 0
    try:
        new["price"] = round(float(f.get("product[price]", str(old["price"])).replace("$", "").replace(",", "")), 2)
        new["qty"] = int(float(f.get("product[quantity_and_stock_status][qty]", str(old["qty"]))))
    except ValueError:
        errors.append("Please enter a valid number in the Price and Quantity fields.")
    stock = f.get("product[quantity_and_stock_status][is_in_stock]", str(old["stock_status"]))
    new["stock_status"] = 0 if stock == "0" else 1
    if isinstance(old["qty"], int) and isinstance(new["qty"], int) and old["qty"] <= 0 < new["qty"]:
        new["stock_status"] = 1  # back in stock once there is quantity again, as Magento's auto stock status
    category = f.get("product[category_ids]", str(old["category_id"]))
    if not ctx.conn.execute("SELECT 1 FROM shop_categories WHERE id = ?", (category,)).fetchone():
        errors.append("Please select a category.")
    else:
        new["category_id"] = int(category)
    _special(ctx, old, new, errors)
    sizes, size_error = _option_list(ctx, "size", SIZE_OPTION_IDS, product_options(old)[0])
    colors, color_error = _option_list(ctx, "color", COLOR_OPTION_IDS, product_options(old)[1])
    new["sizes"], new["colors"] = ",".join(sizes), ",".join(colors)
    errors += [e for e in (size_error, color_error) if e]
    if not new["name"]:
        errors.append("The Product Name field is required.")
    if not errors and (new["price"] < 0 or new["qty"] < 0):
        errors.append("Price and Quantity cannot be negative.")
    if ctx.conn.execute("SELECT 1 FROM shop_products WHERE sku = ? AND id != ?", (new["sku"], old.get("id") or 0)
                        ).fetchone():
        errors.append("The value specified in the SKU field must be unique.")
    return new, errors


_COLUMNS = ("name", "sku", "price", "qty", "stock_status", "enabled", "sale", "category_id", "sizes", "colors",
            "description", "special_price", "special_from", "special_to")


@login_required
def _product_save(ctx: AdminCtx, product_id: int) -> Response:
    p = _product_row(ctx, product_id)
    if p is None:
        return not_found(ctx, "This product no longer exists.")
    new, errors = _posted(ctx, dict(p))
    if errors:
        ctx.flash(" ".join(errors), "error")
        return redirect(f"{PREFIX}/catalog/product/edit/id/{p['id']}/")
    ctx.conn.execute(f"UPDATE shop_products SET {', '.join(c + ' = ?' for c in _COLUMNS)} WHERE id = ?",
                     [new[c] for c in _COLUMNS] + [p["id"]])
    ctx.flash("You saved the product.")
    return redirect(f"{PREFIX}/catalog/product/edit/id/{p['id']}/")


@login_required
def _product_create(ctx: AdminCtx) -> Response:
    blank = {"id": 0, "name": "", "sku": "", "price": "", "qty": "", "stock_status": 1, "category_id": "",
             "sizes": "", "colors": "", "sale": 0, "description": "", "enabled": 1, "special_price": None,
             "special_from": "", "special_to": ""}
    new, errors = _posted(ctx, blank)
    if errors:
        message = f'<div class="message message-error" role="alert">{esc(" ".join(errors))}</div>'
        return admin_page(ctx, "New Product", message + _product_form(ctx, new, "/catalog/product/save/"),
                          status_code=422)
    slug, n = slugify(new["name"]) or "product", 1
    while ctx.conn.execute("SELECT 1 FROM shop_products WHERE slug = ?", (slug,)).fetchone():
        n += 1
        slug = f"{slugify(new['name'])}-{n}"
    position = ctx.conn.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM shop_products").fetchone()[0]
    product_id = next_product_id(ctx.conn)
    ctx.conn.execute(f"INSERT INTO shop_products (id, {', '.join(_COLUMNS)}, slug, position) VALUES "
                     f"({', '.join('?' * (len(_COLUMNS) + 3))})",
                     [product_id, *(new[c] for c in _COLUMNS), slug, position])
    ctx.flash("You saved the product.")
    return redirect(f"{PREFIX}/catalog/product/edit/id/{product_id}/")


ROUTES = [
    ("/catalog/product/", _products, ("GET",), {}),
    ("/catalog/product/edit/id/{product_id:int}/", _product_edit, ("GET",), {}),
    ("/catalog/product/save/id/{product_id:int}/", _product_save, ("POST",), {}),
    ("/catalog/product/new/set/{attribute_set:int}/type/{product_type}/", _product_new, ("GET",), {}),
    ("/catalog/product/save/", _product_create, ("POST",), {}),
]
