"""The shop admin's Marketing > Cart Price Rules: the rules grid, a new rule and a rule's edit page.

The rule form has Magento's field names: `is_active`, `name`, `description`, `website_ids` and
`customer_group_ids` (multi-selects), `coupon_code`, `from_date`, `to_date`, `priority`, `simple_action`
(by_percent, by_fixed, cart_fixed, buy_x_get_y) and `discount_amount`. Saving validates every field and
stores the rule in `shop_sales_rules`; a form with mistakes comes back with the posted values and what
is wrong. The rules are stored for the back office; the storefront's cart does not apply them.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, redirect
from agentenv_webarena.sites.shop.admin_layout import PREFIX, AdminCtx, admin_page, grid, not_found
from agentenv_webarena.sites.shop.admin_reports import parse_report_date

__all__ = ["ROUTES", "WEBSITES", "CUSTOMER_GROUPS", "ACTIONS"]

WEBSITES = {"1": "Main Website"}
CUSTOMER_GROUPS = {"0": "NOT LOGGED IN", "1": "General", "2": "Wholesale", "3": "Retailer"}
ACTIONS = {"by_percent": "Percent of product price discount", "by_fixed": "Fixed amount discount",
           "cart_fixed": "Fixed amount discount for whole cart",
           "buy_x_get_y": "Buy X get Y free (discount amount is Y)"}
_CODE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_GRID = "/sales_rule/promo_quote/"


@login_required
def _rules(ctx: AdminCtx) -> Response:
    rows = ctx.conn.execute("SELECT * FROM shop_sales_rules ORDER BY id").fetchall()
    table = grid(ctx, _GRID, rows, {}, ["ID", "Rule", "Coupon Code", "Priority", "Status", "Web Site", "Action"],
                 lambda r: (f'<tr><td>{r["id"]}</td><td>{esc(r["name"])}</td><td>{esc(r["coupon_code"])}</td>'
                            f'<td>{r["priority"]}</td><td>{"Active" if r["is_active"] else "Inactive"}</td>'
                            f'<td>{", ".join(WEBSITES.get(w, w) for w in r["website_ids"].split(","))}</td>'
                            f'<td><a href="{PREFIX}{_GRID}edit/id/{r["id"]}/" aria-label="Edit {esc(r["name"])}">Edit'
                            '</a></td></tr>'),
                 "Cart Price Rules")
    actions = f'<div class="page-actions"><a id="add" href="{PREFIX}{_GRID}new/">Add New Rule</a></div>'
    return admin_page(ctx, "Cart Price Rules", actions + table)


def _multi(name: str, label: str, options: dict[str, str], chosen: list[str]) -> str:
    opts = "".join(f'<option value="{k}"{" selected" if k in chosen else ""}>{esc(v)}</option>'
                   for k, v in options.items())
    return (f'<div class="field admin__field" data-index="{name}"><label for="{name}">{label}</label>'
            f'<select id="{name}" name="{name}" multiple size="{max(2, len(options))}">{opts}</select></div>')


def _input(name: str, label: str, value: Any) -> str:
    return (f'<div class="field admin__field" data-index="{name}"><label for="{name}">{label}</label>'
            f'<input id="{name}" type="text" name="{name}" value="{esc(value)}"></div>')


def _rule_form(rule: dict, action: str, error: str = "") -> str:
    message = f'<div class="message message-error" role="alert">{esc(error)}</div>' if error else ""
    actions = "".join(f'<option value="{k}"{" selected" if k == rule["simple_action"] else ""}>{esc(v)}</option>'
                      for k, v in ACTIONS.items())
    active = " checked" if rule["is_active"] else ""
    amount = rule["discount_amount"]
    amount = f"{amount:g}" if isinstance(amount, float) else amount
    return (f'{message}<div class="page-actions"><a href="{PREFIX}{_GRID}">Back</a></div>'
            f'<form id="sales_rule_form" method="post" action="{PREFIX}{action}"><fieldset><legend>Rule Information'
            f'</legend><div class="field admin__field" data-index="is_active"><label><input type="checkbox" '
            f'name="is_active" value="1"{active}> Active</label></div>'
            + _input("name", "Rule Name", rule["name"])
            + '<div class="field admin__field" data-index="description"><label for="description">Description</label>'
            f'<textarea id="description" name="description" rows="3" cols="50">{esc(rule["description"])}</textarea>'
            '</div>'
            + _multi("website_ids", "Websites", WEBSITES, rule["website_ids"])
            + _multi("customer_group_ids", "Customer Groups", CUSTOMER_GROUPS, rule["customer_group_ids"])
            + _input("coupon_code", "Coupon Code", rule["coupon_code"])
            + _input("from_date", "From", rule["from_date"]) + _input("to_date", "To", rule["to_date"])
            + _input("priority", "Priority", rule["priority"])
            + '</fieldset><fieldset><legend>Actions</legend>'
            '<div class="field admin__field" data-index="simple_action"><label for="simple_action">Apply</label>'
            f'<select id="simple_action" name="simple_action">{actions}</select>'
            '</div>' + _input("discount_amount", "Discount Amount", amount)
            + '</fieldset><button type="submit">Save</button></form>')


_NEW = {"id": None, "is_active": 1, "name": "", "description": "", "website_ids": [], "customer_group_ids": [],
        "coupon_code": "", "from_date": "", "to_date": "", "priority": "0", "simple_action": "by_percent",
        "discount_amount": ""}


def _rule(ctx: AdminCtx, rule_id: int) -> Optional[dict]:
    row = ctx.conn.execute("SELECT * FROM shop_sales_rules WHERE id = ?", (rule_id,)).fetchone()
    if row is None:
        return None
    rule = dict(row)
    rule["website_ids"] = rule["website_ids"].split(",")
    rule["customer_group_ids"] = rule["customer_group_ids"].split(",")
    return rule


@login_required
def _rule_new(ctx: AdminCtx) -> Response:
    return admin_page(ctx, "New Cart Price Rule", _rule_form(_NEW, f"{_GRID}save/"))


@login_required
def _rule_edit(ctx: AdminCtx, rule_id: int) -> Response:
    rule = _rule(ctx, rule_id)
    if rule is None:
        return not_found(ctx, "This rule no longer exists.")
    return admin_page(ctx, rule["name"], _rule_form(rule, f"{_GRID}save/id/{rule_id}/"))


def _validate(ctx: AdminCtx, rule_id: Optional[int]) -> tuple[dict, list[str]]:
    f = ctx.form
    rule = {"id": rule_id, "is_active": 1 if f.get("is_active") else 0}
    for key in ("name", "description", "coupon_code", "from_date", "to_date", "priority", "simple_action",
                "discount_amount"):
        rule[key] = f.get(key, "").strip()
    rule["website_ids"] = [w for w in ctx.form.getlist("website_ids") if w in WEBSITES]
    rule["customer_group_ids"] = [g for g in ctx.form.getlist("customer_group_ids") if g in CUSTOMER_GROUPS]
    errors = []
    if not rule["name"]:
        errors.append("The Rule Name field is required.")
    if not rule["website_ids"]:
        errors.append("Please select a website.")
    if not rule["customer_group_ids"]:
        errors.append("Please select at least one customer group.")
    if rule["simple_action"] not in ACTIONS:
        errors.append("Please select a discount action.")
    try:
        amount = float(rule["discount_amount"])
        if amount < 0 or (rule["simple_action"] == "by_percent" and amount > 100):
            raise ValueError
    except ValueError:
        errors.append("Please enter a discount amount of 0 or more (at most 100 for a percent discount).")
    if not re.fullmatch(r"-?\d{1,6}", rule["priority"] or "0"):
        errors.append("Please enter a whole number in the Priority field.")
    dates = {}
    for key, label in (("from_date", "From"), ("to_date", "To")):
        dates[key] = parse_report_date(rule[key]) if rule[key] else ""
        if rule[key] and not dates[key]:
            errors.append(f"Please enter a valid date in the {label} field.")
    if dates["from_date"] and dates["to_date"] and dates["from_date"] > dates["to_date"]:
        errors.append("The From date must not be after the To date.")
    if rule["coupon_code"]:
        if not _CODE.match(rule["coupon_code"]):
            errors.append("A coupon code has letters, digits, - and _ only.")
        elif ctx.conn.execute("SELECT 1 FROM shop_sales_rules WHERE coupon_code = ? AND id != ?",
                              (rule["coupon_code"], rule_id or 0)).fetchone():
            errors.append("The coupon code has already been used by another rule.")
    return rule, errors


@login_required
def _rule_save(ctx: AdminCtx, rule_id: Optional[int] = None) -> Response:
    if rule_id is not None and _rule(ctx, rule_id) is None:
        return not_found(ctx, "This rule no longer exists.")
    rule, errors = _validate(ctx, rule_id)
    action = f"{_GRID}save/" + (f"id/{rule_id}/" if rule_id else "")
    if errors:
        return admin_page(ctx, rule["name"] or "New Cart Price Rule", _rule_form(rule, action, " ".join(errors)),
                          status_code=422)
    values = (rule["name"], rule["description"], rule["is_active"], ",".join(rule["website_ids"]),
              ",".join(rule["customer_group_ids"]), rule["coupon_code"], rule["from_date"], rule["to_date"],
              int(rule["priority"] or 0), rule["simple_action"], float(rule["discount_amount"]))
    columns = ("name, description, is_active, website_ids, customer_group_ids, coupon_code, from_date, to_date, "
               "priority, simple_action, discount_amount")
    if rule_id is None:
        ctx.conn.execute(f"INSERT INTO shop_sales_rules ({columns}) VALUES ({', '.join('?' * len(values))})", values)
    else:
        assignments = ", ".join(f"{c.strip()} = ?" for c in columns.split(","))
        ctx.conn.execute(f"UPDATE shop_sales_rules SET {assignments} WHERE id = ?", (*values, rule_id))
    ctx.flash("You saved the rule.")
    return redirect(f"{PREFIX}{_GRID}")


ROUTES = [
    (_GRID, _rules, ("GET",), {}),
    (f"{_GRID}index/", _rules, ("GET",), {}),
    (f"{_GRID}new/", _rule_new, ("GET",), {}),
    (f"{_GRID}edit/id/{{rule_id:int}}/", _rule_edit, ("GET",), {}),
    (f"{_GRID}save/", _rule_save, ("POST",), {}),
    (f"{_GRID}save/id/{{rule_id:int}}/", _rule_save, ("POST",), {}),
]
