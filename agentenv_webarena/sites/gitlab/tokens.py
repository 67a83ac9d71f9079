"""The code host's personal access tokens: the signed-in user's tokens, a form to add one, and revoking.

Owns GET/POST `/-/user_settings/personal_access_tokens` (`personal_access_token[name]`,
`personal_access_token[expires_at]` YYYY-MM-DD after today, one checkbox `personal_access_token[scopes][<scope>]`
per scope of `SCOPES`;
the new token is shown once, in `#created-personal-access-token`) and POST
`/-/user_settings/personal_access_tokens/<id>/revoke`. Active tokens are rows `tr.token-row[data-name]` of
`#active-tokens` (cells `td.token-scopes`, `td.token-created`, `td.token-expires`); revoked ones are listed in
`#revoked-tokens`. `seed_tokens` gives byteblaze a few tokens.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, redirect, to_int
from agentenv_webarena.sites.gitlab.layout import Ctx, not_found, render_page, text_field
from agentenv_webarena.sites.gitlab.model import site_now

__all__ = ["SCOPES", "TOKENS_PATH", "access_tokens", "revoke_token", "seed_tokens"]

TOKENS_PATH = "/-/user_settings/personal_access_tokens"
SCOPES = {"api": "Grants complete read/write access to the API.",
          "read_api": "Grants read access to the API.",
          "read_user": "Grants read-only access to your profile.",
          "read_repository": "Grants read-only access to repositories.",
          "write_repository": "Grants read-write access to repositories."}
# byteblaze's seeded tokens: name, scopes, created, expires
_SEED = [("ci-pipeline", "api", "2023-01-10 09:00:00", "2023-12-31"),
         ("old-laptop", "read_repository, write_repository", "2022-03-02 18:30:00", "2024-03-01"),
         ("backup-script", "read_repository", "2022-11-20 07:15:00", "2023-11-20"),
         ("ide-plugin", "read_api, read_user", "2023-04-05 12:00:00", "2024-04-05")]


def _token_value(user_id: int, name: str, created_at: str) -> str:
    return "glpat-" + hashlib.sha1(f"{user_id}:{name}:{created_at}".encode()).hexdigest()[:20]


def seed_tokens(conn: sqlite3.Connection, user_id: int) -> None:
    """The primary user's personal access tokens."""
    conn.executemany("INSERT INTO gitlab_access_tokens (user_id, name, scopes, token, expires_at, created_at) "
                     "VALUES (?,?,?,?,?,?)",
                     [(user_id, n, s, _token_value(user_id, n, c), e, c) for n, s, c, e in _SEED])


def _tokens(conn: sqlite3.Connection, user_id: int, revoked: int) -> list[sqlite3.Row]:
    return conn.execute("SELECT * FROM gitlab_access_tokens WHERE user_id = ? AND revoked = ? ORDER BY created_at, id",
                        (user_id, revoked)).fetchall()


def _table(rows: list[sqlite3.Row], table_id: str, label: str, revoke: bool) -> str:
    if not rows:
        return f'<p id="{table_id}" class="tokens-empty">This user has no {label.lower()}.</p>'
    body = []
    for t in rows:
        action = (f'<form action="{TOKENS_PATH}/{t["id"]}/revoke" method="post"><button type="submit">'
                  f'Revoke {esc(t["name"])}</button></form>') if revoke else ""
        body.append(f'<tr class="token-row" data-name="{esc(t["name"])}"><td class="token-name">{esc(t["name"])}</td>'
                    f'<td class="token-scopes">{esc(t["scopes"])}</td>'
                    f'<td class="token-created">{t["created_at"][:10]}</td>'
                    f'<td class="token-expires">{t["expires_at"]}</td><td>{action}</td></tr>')
    return (f'<table id="{table_id}" aria-label="{label}"><thead><tr><th>Token name</th><th>Scopes</th>'
            f'<th>Created</th><th>Expires</th><th>Action</th></tr></thead><tbody>{"".join(body)}</tbody></table>')


def _form(values: dict, checked: list[str]) -> str:
    boxes = "".join(f'<label><input type="checkbox" name="personal_access_token[scopes][{s}]" value="1"'
                    f'{" checked" if s in checked else ""}> {s}</label><p class="scope-help">{esc(help_)}</p>'
                    for s, help_ in SCOPES.items())
    return (f'<form action="{TOKENS_PATH}" method="post" class="new-token-form"><h2>Add a personal access token</h2>'
            + text_field("personal_access_token_name", "personal_access_token[name]", "Token name",
                         values.get("personal_access_token[name]", ""), required=True)
            + text_field("personal_access_token_expires_at", "personal_access_token[expires_at]", "Expiration date",
                         values.get("personal_access_token[expires_at]", ""), placeholder="YYYY-MM-DD")
            + f'<fieldset><legend>Select scopes</legend>{boxes}</fieldset>'
            '<p><button type="submit">Create personal access token</button></p></form>')


def _error(conn: sqlite3.Connection, name: str, expires: str, scopes: list[str]) -> str:
    if not name:
        return "Token name can't be blank."
    try:
        day = dt.date.fromisoformat(expires)
    except ValueError:
        return "Expiration date must be a date (YYYY-MM-DD)."
    if day <= dt.date.fromisoformat(site_now(conn)[:10]):
        return "Expiration date must be in the future."
    if not scopes:
        return "Select at least one scope (api, read_api, read_user, read_repository, write_repository)."
    return ""


@login_required
def access_tokens(ctx: Ctx) -> Response:
    """GET/POST `/-/user_settings/personal_access_tokens`: the tokens, and adding one."""
    created, alert, values, checked = "", "", {}, []
    status = 200
    if ctx.posted:
        values = ctx.form
        name = values.get("personal_access_token[name]", "").strip()
        expires = values.get("personal_access_token[expires_at]", "").strip()
        checked = [s for s in SCOPES if values.get(f"personal_access_token[scopes][{s}]")]
        error = _error(ctx.conn, name, expires, checked)
        if error:
            alert, status = f'<p class="flash-alert" role="alert">{esc(error)}</p>', 422
        else:
            now = site_now(ctx.conn)
            token = _token_value(ctx.user_id, name, now)
            ctx.conn.execute("INSERT INTO gitlab_access_tokens (user_id, name, scopes, token, expires_at, created_at) "
                             "VALUES (?,?,?,?,?,?)", (ctx.user_id, name, ", ".join(checked), token, expires, now))
            created = ('<div class="created-token"><label for="created-personal-access-token">Your new personal '
                       f'access token</label><input type="text" readonly id="created-personal-access-token" '
                       f'value="{token}"><p>Make sure you save it - you won\'t be able to access it again.</p></div>')
            values, checked = {}, []
    active = _table(_tokens(ctx.conn, ctx.user_id, 0), "active-tokens", "Active tokens", True)
    revoked = _table(_tokens(ctx.conn, ctx.user_id, 1), "revoked-tokens", "Revoked tokens", False)
    main = (f"<h1>Personal access tokens</h1>{alert}{created}{_form(values, checked)}"
            f"<h2>Active personal access tokens</h2>{active}<h2>Revoked personal access tokens</h2>{revoked}")
    return render_page(ctx, "Personal access tokens", main, status_code=status)


@login_required
def revoke_token(ctx: Ctx, token_id: str) -> Response:
    """POST `/-/user_settings/personal_access_tokens/<id>/revoke`: revoke one of the user's tokens."""
    done = ctx.conn.execute("UPDATE gitlab_access_tokens SET revoked = 1 WHERE id = ? AND user_id = ? AND revoked = 0",
                            (to_int(token_id, -1), ctx.user_id))
    return redirect(TOKENS_PATH) if done.rowcount else not_found(ctx)
