"""The shop admin's order addresses: the Address Information boxes of an order view and their edit page.

Every order has two addresses with Magento's ids: billing `2 * order_id - 1`, shipping `2 * order_id`. The shipping
address is the order's `ship_*` columns (the storefront shows it too); the billing address is the order's row in
`shop_order_billing` once it was edited apart, else the shipping address (the seed bills every order to where it
ships). Paths (under `/admin`): GET `/sales/order_address/edit/address_id/<id>/` (Magento's); POST
`/sales/order/addressSave/address_id/<id>/` with Magento's field names `firstname`, `lastname`, `street[0]`,
`street[1]` (joined with ", "), `city`, `region`, `postcode`, `country_id`, `telephone`. CSS hooks (Magento's):
`.order-billing-address address`, `.order-shipping-address address`.
"""
from __future__ import annotations

import sqlite3
from typing import Optional

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, redirect
from agentenv_webarena.sites.shop.admin_layout import PREFIX, AdminCtx, admin_page, not_found

__all__ = ["ROUTES", "FIELDS", "address_id", "order_address", "address_sections"]

# column -> form label (Magento's order address form), in form order
FIELDS = {"firstname": "First Name", "lastname": "Last Name", "street": "Street Address", "city": "City",
          "region": "State/Province", "postcode": "Zip/Postal Code", "country": "Country",
          "telephone": "Phone Number"}
_KINDS = {"billing": "Billing Address", "shipping": "Shipping Address"}


def address_id(order_id: int, kind: str) -> int:
    """Magento's id of an order's `kind` ("billing" or "shipping") address."""
    return 2 * order_id - (1 if kind == "billing" else 0)


def order_address(conn: sqlite3.Connection, order_id: int, kind: str) -> Optional[dict]:
    """An order's billing or shipping address as {column: value} (`FIELDS`); None without such an order."""
    o = conn.execute("SELECT * FROM shop_orders WHERE id = ?", (order_id,)).fetchone()
    if o is None:
        return None
    billing = kind == "billing" and conn.execute("SELECT * FROM shop_order_billing WHERE order_id = ?",
                                                 (order_id,)).fetchone()
    if billing:
        return {k: billing[k] for k in FIELDS}
    return {k: o[f"ship_{k}"] for k in FIELDS}


def _lines(a: dict) -> str:
    return (f'{esc(a["firstname"])} {esc(a["lastname"])}<br>{esc(a["street"])}<br>{esc(a["city"])}, '
            f'{esc(a["region"])}, {esc(a["postcode"])}<br>{esc(a["country"])}<br>T: {esc(a["telephone"])}')


def address_sections(conn: sqlite3.Connection, order_id: int) -> str:
    """The order view's Address Information: the billing and shipping boxes, each with its Edit link."""
    boxes = "".join(
        f'<div class="admin__page-section-item order-{kind}-address"><h3>{label} <a href="{PREFIX}/sales/'
        f'order_address/edit/address_id/{address_id(order_id, kind)}/" aria-label="Edit {label}">Edit</a></h3>'
        f'<address class="admin__page-section-item-content">{_lines(order_address(conn, order_id, kind))}</address>'
        '</div>' for kind, label in _KINDS.items())
    return f'<section class="order-addresses"><h2>Address Information</h2>{boxes}</section>'


def _target(address: int) -> tuple[int, str]:
    return (address + 1) // 2, ("billing" if address % 2 else "shipping")


def _form(address: int, values: dict, error: str = "") -> str:
    message = f'<div class="message message-error" role="alert">{esc(error)}</div>' if error else ""
    street = [part.strip() for part in values["street"].split(",", 1)] + [""]
    fields = []
    for key, label in FIELDS.items():
        if key == "street":
            fields += [f'<div class="field"><label for="street0">{label}</label><input id="street0" type="text" '
                       f'name="street[0]" value="{esc(street[0])}"></div><div class="field"><label for="street1">'
                       f'{label}: Line 2</label><input id="street1" type="text" name="street[1]" '
                       f'value="{esc(street[1])}"></div>']
            continue
        name = "country_id" if key == "country" else key
        fields.append(f'<div class="field"><label for="{key}">{label}</label><input id="{key}" type="text" '
                      f'name="{name}" value="{esc(values[key])}"></div>')
    order_id, _ = _target(address)
    return (f'{message}<div class="page-actions"><a href="{PREFIX}/sales/order/view/order_id/{order_id}/">Back</a>'
            f'</div><form id="edit_form" method="post" action="{PREFIX}/sales/order/addressSave/address_id/'
            f'{address}/"><fieldset><legend>Order Address Information</legend>{"".join(fields)}</fieldset>'
            '<button type="submit">Save Order Address</button></form>')


@login_required
def _edit(ctx: AdminCtx, address: int) -> Response:
    order_id, kind = _target(address)
    values = order_address(ctx.conn, order_id, kind)
    if values is None:
        return not_found(ctx, "We can't find an address with this ID.")
    return admin_page(ctx, "Edit Order Address", _form(address, values))


@login_required
def _save(ctx: AdminCtx, address: int) -> Response:
    order_id, kind = _target(address)
    if order_address(ctx.conn, order_id, kind) is None:
        return not_found(ctx, "We can't find an address with this ID.")
    street = ", ".join(s for s in (ctx.form.get("street[0]", "").strip(), ctx.form.get("street[1]", "").strip()) if s)
    values = {k: ctx.form.get("country_id" if k == "country" else k, "").strip() for k in FIELDS}
    values["street"] = street
    missing = [label for k, label in FIELDS.items() if not values[k]]
    if missing:
        return admin_page(ctx, "Edit Order Address",
                          _form(address, values, f"Please fill in: {', '.join(missing)}."), status_code=422)
    if kind == "shipping":  # the billing address keeps what it was: freeze it before the shipping one moves
        ctx.conn.execute(f"INSERT OR IGNORE INTO shop_order_billing (order_id, {', '.join(FIELDS)}) SELECT id, "
                         f"{', '.join(f'ship_{k}' for k in FIELDS)} FROM shop_orders WHERE id = ?", (order_id,))
        ctx.conn.execute(f"UPDATE shop_orders SET {', '.join(f'ship_{k} = ?' for k in FIELDS)} WHERE id = ?",
                         (*values.values(), order_id))
    else:
        ctx.conn.execute(f"INSERT OR REPLACE INTO shop_order_billing (order_id, {', '.join(FIELDS)}) VALUES "
                         f"(?, {', '.join('?' * len(FIELDS))})", (order_id, *values.values()))
    ctx.flash("You updated the order address.")
    return redirect(f"{PREFIX}/sales/order/view/order_id/{order_id}/")


ROUTES = [
    ("/sales/order_address/edit/address_id/{address:int}/", _edit, ("GET",), {}),
    ("/sales/order/addressSave/address_id/{address:int}/", _save, ("POST",), {}),
]
