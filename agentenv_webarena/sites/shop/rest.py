"""The shop's Magento REST subset: admin tokens, the orders search, product reviews, products (JSON).

Owns the endpoints WebArena's evaluators and helper functions call (`/rest/V1/...`, same under
`/rest/default/V1/...`) and their JSON shapes; every endpoint but the token one needs an admin
bearer token.
"""
from __future__ import annotations

import json
import re
import sqlite3
from typing import Optional

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agentenv_webarena.sites.common import json_error, new_token, to_int
from agentenv_webarena.sites.shop.model import REVIEW_STATUS, hash_password, order_items

__all__ = ["rest_admin", "rest_token", "rest_orders", "rest_reviews", "rest_product"]


def rest_admin(conn: sqlite3.Connection, request: Request) -> Optional[sqlite3.Row]:
    """The admin whose bearer token the request carries, else None."""
    auth = request.headers.get("authorization", "")
    if not auth.lower().startswith("bearer "):
        return None
    return conn.execute("SELECT u.* FROM shop_admin_tokens t JOIN shop_admin_users u ON u.id = t.admin_id "
                        "WHERE t.token = ?", (auth[7:].strip(),)).fetchone()


def rest_token(conn: sqlite3.Connection, body: bytes) -> Response:
    """POST `.../integration/admin/token`: a new admin bearer token for valid credentials."""
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        return json_error(400, "Decoding error: the request body is not JSON.")
    if not isinstance(data, dict):
        return json_error(400, 'The request body must be a JSON object {"username": ..., "password": ...}.')
    user = conn.execute("SELECT * FROM shop_admin_users WHERE username = ?",
                        (str(data.get("username", "")),)).fetchone()
    if user is None or user["password_hash"] != hash_password(str(data.get("password", ""))):
        return json_error(401, "The account sign-in was incorrect or your account is disabled temporarily. "
                               "Please wait and try again later.")
    token = new_token()
    conn.execute("INSERT INTO shop_admin_tokens (token, admin_id) VALUES (?, ?)", (token, user["id"]))
    return JSONResponse(token)


_ORDER_FIELDS = {"entity_id": "o.id", "increment_id": "o.increment_id", "created_at": "o.created_at",
                 "updated_at": "o.updated_at", "status": "o.status", "grand_total": "o.grand_total",
                 "subtotal": "o.subtotal", "customer_id": "o.customer_id", "customer_email": "c.email",
                 "customer_firstname": "c.firstname", "customer_lastname": "c.lastname"}
_CONDITIONS = {"eq": "=", "neq": "!=", "gt": ">", "gteq": ">=", "lt": "<", "lteq": "<=", "like": "LIKE"}


def _order_json(conn: sqlite3.Connection, o: sqlite3.Row) -> dict:
    items = [{"item_id": i["id"], "order_id": o["id"], "product_id": i["product_id"], "sku": i["sku"],
              "name": i["name"], "price": i["price"], "qty_ordered": i["qty"],
              "row_total": round(i["price"] * i["qty"], 2),
              "product_options": {k: v for k, v in (("size", i["size"]), ("color", i["color"])) if v}}
             for i in order_items(conn, o["id"])]
    state = {"holded": "holded", "pending": "new"}.get(o["status"], o["status"])
    return {
        "entity_id": o["id"], "increment_id": o["increment_id"], "created_at": o["created_at"],
        "updated_at": o["updated_at"], "status": o["status"], "state": state, "grand_total": o["grand_total"],
        "base_grand_total": o["grand_total"], "subtotal": o["subtotal"], "shipping_amount": o["shipping"],
        "total_qty_ordered": sum(i["qty_ordered"] for i in items), "customer_id": o["customer_id"],
        "customer_email": o["email"], "customer_firstname": o["firstname"], "customer_lastname": o["lastname"],
        "order_currency_code": "USD", "store_id": 1, "items": items,
        "billing_address": {"firstname": o["ship_firstname"], "lastname": o["ship_lastname"],
                            "street": [o["ship_street"]], "city": o["ship_city"], "region": o["ship_region"],
                            "postcode": o["ship_postcode"], "country_id": "US", "telephone": o["ship_telephone"]},
        "payment": {"method": "checkmo", "additional_information": [o["payment_method"]]},
    }


def rest_orders(conn: sqlite3.Connection, request: Request) -> Response:
    """GET `.../orders`: orders filtered, sorted and paged by Magento's `searchCriteria`."""
    params = request.query_params
    where, args = [], []
    groups: dict[tuple[str, str], dict[str, str]] = {}
    for key, value in params.multi_items():
        m = re.fullmatch(r"searchCriteria\[filter_?[gG]roups\]\[(\d+)\]\[filters\]\[(\d+)\]\[(\w+)\]", key)
        if m:
            groups.setdefault((m[1], m[2]), {})[m[3]] = value
    for spec in groups.values():
        column = _ORDER_FIELDS.get(spec.get("field", ""))
        if column is None:
            return json_error(400, f'"{spec.get("field")}" is not a filterable order field; use one of '
                                   f'{sorted(_ORDER_FIELDS)}.')
        op = _CONDITIONS.get(spec.get("condition_type", spec.get("conditionType", "eq")), "=")
        where.append(f"{column} {op} ?")
        args.append(spec.get("value", ""))
    sort_field = params.get("searchCriteria[sortOrders][0][field]", "entity_id")
    if sort_field not in _ORDER_FIELDS:
        return json_error(400, f'"{sort_field}" is not a sortable order field; use one of {sorted(_ORDER_FIELDS)}.')
    direction = "DESC" if params.get("searchCriteria[sortOrders][0][direction]", "ASC").upper() == "DESC" else "ASC"
    page_size = to_int(params.get("searchCriteria[pageSize]"), 0)
    current = max(1, to_int(params.get("searchCriteria[currentPage]"), 1))
    sql = ("SELECT o.*, c.email, c.firstname, c.lastname FROM shop_orders o JOIN shop_customers c ON c.id = "
           f"o.customer_id {'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY {_ORDER_FIELDS[sort_field]} "
           f"{direction}, o.id {direction}")
    rows = conn.execute(sql, args).fetchall()
    total = len(rows)
    if page_size > 0:
        rows = rows[(current - 1) * page_size: current * page_size]
    criteria = {"sort_orders": [{"field": sort_field, "direction": direction}], "page_size": page_size or None,
                "current_page": current}
    return JSONResponse({"items": [_order_json(conn, o) for o in rows], "search_criteria": criteria,
                         "total_count": total})


def rest_reviews(conn: sqlite3.Connection, sku: str) -> Response:
    """GET `.../products/<sku>/reviews`: every review of a product, oldest first."""
    product = conn.execute("SELECT * FROM shop_products WHERE sku = ?", (sku,)).fetchone()
    if product is None:
        return json_error(404, "The product that was requested doesn't exist. Verify the product and try again.")
    rows = conn.execute("SELECT * FROM shop_reviews WHERE product_id = ? ORDER BY created_at, id",
                        (product["id"],)).fetchall()
    return JSONResponse([{
        "id": r["id"], "title": r["title"], "detail": r["detail"], "nickname": r["nickname"],
        "ratings": [{"vote_id": r["id"], "rating_id": 4, "rating_name": "Rating", "percent": r["rating_percent"],
                     "value": r["rating_percent"] // 20}],
        "review_entity": "product", "review_type": 2 if r["customer_id"] is None else 1,
        "review_status": REVIEW_STATUS[r["status"]], "created_at": r["created_at"], "entity_pk_value": product["id"],
        "store_id": 1, "stores": [1]} for r in rows])


def rest_product(conn: sqlite3.Connection, sku: str) -> Response:
    """GET `.../products/<sku>`: one product."""
    p = conn.execute("SELECT * FROM shop_products WHERE sku = ?", (sku,)).fetchone()
    if p is None:
        return json_error(404, "The product that was requested doesn't exist. Verify the product and try again.")
    return JSONResponse({"id": p["id"], "sku": p["sku"], "name": p["name"], "price": p["price"],
                         "status": 1 if p["enabled"] else 2, "type_id": "simple",
                         "extension_attributes": {"stock_item": {"qty": p["qty"], "is_in_stock": p["qty"] > 0}},
                         "custom_attributes": [{"attribute_code": "url_key", "value": p["slug"]},
                                               {"attribute_code": "description", "value": p["description"]}]})
