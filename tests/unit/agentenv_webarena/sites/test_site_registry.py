"""The sites registry (`sites.apps.SITES`): every site builds, answers its control routes, and one /reset
restores every site's tables at once while other instances keep theirs."""
from __future__ import annotations

import importlib

from starlette.testclient import TestClient

from agentenv_webarena.sites.apps import SITE_MODULES, SITES, build_apps, build_database
from agentenv_webarena.sites.store import INSTANCE_HEADER, InstanceStore

WEBARENA_SITES = {"shopping", "shopping_admin", "reddit", "gitlab", "map", "wikipedia", "homepage"}


def _counts(conn) -> dict[str, int]:
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                         "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}


def test_every_webarena_site_kind_is_served_by_a_module_with_an_app():
    assert set(SITES) == WEBARENA_SITES
    for module_name, mount in SITES.values():
        assert callable(importlib.import_module(module_name).create_app), module_name
        assert mount.startswith("/")
    for name in SITE_MODULES:
        module = importlib.import_module(name)
        assert isinstance(module.SCHEMA, str) and callable(module.seed), name


def test_reset_restores_every_sites_tables_and_leaves_other_instances_alone():
    store = InstanceStore(build_database, max_instances=4)
    pristine = _counts(store.pristine())
    with store.connection("a") as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        for table in pristine:
            conn.execute(f'DELETE FROM "{table}"')
        conn.execute("PRAGMA foreign_keys = ON")
    with store.connection("a") as conn:
        assert set(_counts(conn).values()) == {0}
    with store.connection("b") as conn:
        assert _counts(conn) == pristine
    store.reset("a")
    with store.connection("a") as conn:
        assert _counts(conn) == pristine


def test_each_site_answers_its_pages_and_the_control_routes():
    urls: dict[str, str] = {}
    store, apps = build_apps(InstanceStore(build_database, max_instances=4), site_urls=urls)
    urls.update({site: f"http://{site}.test" for site in apps})
    for site, app in apps.items():
        client = TestClient(app, headers={INSTANCE_HEADER: "registry"})
        assert client.get("/__control/health").json() == "ok", site
        mount = SITES[site][1]
        page = client.get(mount, follow_redirects=True)
        assert page.status_code < 500, (site, page.status_code, page.text[:300])
        reset = client.post("/__control/reset", params={"instance": "registry"})
        assert reset.status_code == 200 and reset.json()["instance"] == "registry", site
    home = TestClient(apps["homepage"]).get("/").text
    for site in WEBARENA_SITES - {"homepage"}:
        assert f'href="http://{site}.test' in home, site
