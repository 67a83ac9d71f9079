"""The storefront's Contact Us page: Magento's "Write Us" form and the message it stores.

Owns `/contact/` (also `/contact/index/`) and its POST `/contact/index/post/`, which validates the
fields as Magento does, keeps the message in `shop_contact_messages` and thanks the visitor.
"""
from __future__ import annotations

import re
from typing import Mapping

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, redirect
from agentenv_webarena.sites.shop.layout import Ctx, render_page
from agentenv_webarena.sites.shop.model import site_now

__all__ = ["contact_page", "contact_post", "THANKS"]

THANKS = "Thanks for contacting us with your comments and questions. We'll respond to you very soon."
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_FIELD = '<div class="field {key}{req}"><label for="{key}">{label}</label>{control}</div>'


def _form(values: Mapping[str, str], error: str = "") -> str:
    def attrs(key: str, label: str) -> str:
        return f'name="{key}" id="{key}" title="{label}"'

    fields = "".join(_FIELD.format(key=key, req=" required" if required else "", label=label, control=(
        f'<input {attrs(key, label)} type="{kind}" class="input-text" value="{esc(values.get(key, ""))}">'))
        for key, label, kind, required in (("name", "Name", "text", True), ("email", "Email", "email", True),
                                           ("telephone", "Phone Number", "tel", False)))
    fields += _FIELD.format(key="comment", req=" required", label="What’s on your mind?", control=(
        f'<textarea {attrs("comment", "What’s on your mind?")} class="input-text" cols="5" rows="3">'
        f'{esc(values.get("comment", ""))}</textarea>'))
    message = f'<div class="message message-error" role="alert">{esc(error)}</div>' if error else ""
    return (f'{message}<h1 class="page-title">Contact Us</h1><form class="form contact" id="contact-form" '
            'method="post" action="/contact/index/post/"><fieldset class="fieldset"><legend class="legend">Write Us'
            '</legend>'
            '<p class="field note no-label">Jot us a note and we’ll get back to you as quickly as possible.</p>'
            f'{fields}</fieldset><button type="submit" title="Submit" class="action submit primary">Submit</button>'
            '</form>')


def contact_page(ctx: Ctx) -> Response:
    """GET `/contact/`: the form, with a signed-in customer's name and email filled in (as Magento does)."""
    c = ctx.customer
    values = {"name": f'{c["firstname"]} {c["lastname"]}', "email": c["email"]} if c is not None else {}
    return render_page(ctx, "Contact Us", _form(values))


def contact_post(ctx: Ctx) -> Response:
    """POST `/contact/index/post/`: store the message and thank the visitor; bad fields re-show the form."""
    values = {key: ctx.form.get(key, "").strip() for key in ("name", "email", "telephone", "comment")}
    error = ("Enter the Name and try again." if not values["name"] else
             "Enter the comment and try again." if not values["comment"] else
             "The email address is invalid. Verify the email address and try again."
             if not _EMAIL.fullmatch(values["email"]) else "")
    if error:
        return render_page(ctx, "Contact Us", _form(values, error))
    ctx.conn.execute("INSERT INTO shop_contact_messages (customer_id, name, email, telephone, comment, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)", (ctx.customer["id"] if ctx.customer is not None else None,
                                                   values["name"], values["email"], values["telephone"],
                                                   values["comment"], site_now(ctx.conn)))
    ctx.flash(THANKS)
    return redirect("/contact/index/")
