"""The desired-state rule's guard (tests/support/desired_state_guard.py) catches a writer
that forgets to mark listings pending (issue 37)."""

import ast
import pathlib

import pytest

from commerce_api.db import is_postgres
from commerce_api.inventory import ledger
from commerce_api.products import services as product_services
from tests.support.desired_state_guard import watching
from tests.support.factories import auth_headers, create_product, make_key, make_tenant
from tests.support.inventory_helpers import make_warehouse, set_stock


def _client_and_headers(app):
    if is_postgres():
        pytest.skip("the guard reads SQLite's statement trace (the SQLite pass)")
    tenant = make_tenant()
    _, secret = make_key(tenant)
    return app.test_client(), auth_headers(tenant, secret)


def _changes(client, headers):
    """A product, its stock set, the product changed: each change marks its listings."""
    create_product(client, headers, sku="GUARD-1", title="Widget")
    warehouse = make_warehouse(client, headers)
    set_stock(client, headers, "GUARD-1", warehouse["id"], 5)
    response = client.patch("/api/products/GUARD-1", json={"title": "Gadget"}, headers=headers)
    assert response.status_code == 200, response.get_json()


def _watched_changes(app):
    """``_changes`` under a guard of its own; the violations it found."""
    client, headers = _client_and_headers(app)
    guard = watching(app)
    try:
        _changes(client, headers)
    finally:
        guard.stop()
        guard.restore()
    return guard.violations


def test_the_writers_as_they_are_keep_the_rule(app):
    assert _watched_changes(app) == []


@pytest.mark.parametrize(
    ("module", "writes"),
    [(ledger, "stock"), (product_services, "product")],
    ids=["stock ledger", "product update"],
)
def test_a_writer_that_skips_the_rule_is_caught(app, monkeypatch, module, writes):
    monkeypatch.setattr(module, "mark_listings_pending", lambda **kwargs: 0)
    violations = _watched_changes(app)
    assert violations, "a change that did not mark its listings went unnoticed"
    assert all(f"'{writes}'" in violation for violation in violations), violations


# -- one place calls the marking (AST) -------------------------------------------------

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "commerce_api"
THE_PLACE = "products/desired_state.py"


def mark_callers(root: pathlib.Path) -> set[str]:
    """The modules under ``root`` that call ``mark_listings_pending`` (by name or as an
    attribute), or import it (an alias would hide the call)."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            named = (
                isinstance(node, ast.Call)
                and (
                    (isinstance(node.func, ast.Name) and node.func.id == MARK_NAME)
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == MARK_NAME)
                )
            ) or (
                isinstance(node, ast.ImportFrom) and any(a.name == MARK_NAME for a in node.names)
            )
            if named:
                found.add(path.relative_to(root).as_posix())
    return found


MARK_NAME = "mark_listings_pending"


@pytest.mark.engine_free
def test_only_the_desired_state_module_marks_listings():
    assert mark_callers(PACKAGE) - {THE_PLACE} == set()


@pytest.mark.engine_free
def test_a_writer_that_marks_by_itself_is_found(tmp_path):
    (tmp_path / "products").mkdir()
    (tmp_path / "products" / "desired_state.py").write_text(
        "def mark_listings_pending(**kw):\n    return 0\n\n\ndef f():\n    mark_listings_pending()\n"
    )
    (tmp_path / "stock.py").write_text(
        "from products import desired_state\n\n\ndef g():\n"
        "    desired_state.mark_listings_pending(product_ids=[1])\n"
    )
    (tmp_path / "other.py").write_text("from products.desired_state import write_product\n")
    assert mark_callers(tmp_path) - {THE_PLACE} == {"stock.py"}
