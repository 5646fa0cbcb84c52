"""The desired-state rule's guard (tests/support/desired_state_guard.py) catches a writer
that forgets to mark listings pending (issue 37)."""

import ast
import pathlib

import pytest

from commerce_api.db import is_postgres
from commerce_api.products import desired_state
from tests.support.desired_state_guard import listing_write, watching
from tests.support.factories import auth_headers, create_product, make_key, make_tenant
from tests.support.inventory_helpers import make_warehouse, set_stock
from tests.support.products_support import add_listing

# the writes each step makes; marking is switched off for one of them at a time
WRITES = ("stock", "product", "listing")


def _client_and_headers(app):
    if is_postgres():
        pytest.skip("the guard reads SQLite's statement trace (the SQLite pass)")
    tenant = make_tenant()
    _, secret = make_key(tenant)
    return tenant, app.test_client(), auth_headers(tenant, secret)


def _changes(app, before=lambda write: None):
    """A listed product; its stock set, the product changed, the listing's price changed:
    each change marks its listings. ``before(write)`` runs before each change."""
    tenant, client, headers = _client_and_headers(app)
    product = create_product(client, headers, sku="GUARD-1", title="Widget")
    add_listing(tenant.id, product["id"], "amazon_us")
    warehouse = make_warehouse(client, headers)
    before("stock")
    set_stock(client, headers, "GUARD-1", warehouse["id"], 5)
    before("product")
    response = client.patch("/api/products/GUARD-1", json={"title": "Gadget"}, headers=headers)
    assert response.status_code == 200, response.get_json()
    before("listing")
    response = client.patch(
        "/api/products/GUARD-1/listings/amazon_us", json={"price": 23.5}, headers=headers
    )
    assert response.status_code == 200, response.get_json()
    before(None)


def _watched_changes(app, before=lambda write: None):
    """``_changes`` under a guard of its own; the violations it found."""
    guard = watching(app) if not is_postgres() else None
    try:
        _changes(app, before)
    finally:
        if guard is not None:
            guard.stop()
            guard.restore()
    return guard.violations


def test_the_writers_as_they_are_keep_the_rule(app):
    assert _watched_changes(app) == []


@pytest.mark.parametrize("writes", WRITES)
def test_a_writer_that_skips_the_rule_is_caught(app, monkeypatch, writes):
    """Marking switched off for one change: the guard names the table it wrote."""

    def before(write):
        if write == writes:
            monkeypatch.setattr(desired_state, "mark_listings_pending", lambda **kwargs: 0)
        else:
            monkeypatch.undo()

    violations = _watched_changes(app, before)
    assert violations, "a change that did not mark its listings went unnoticed"
    assert all(f"'{writes}'" in violation for violation in violations), violations


@pytest.mark.engine_free
@pytest.mark.parametrize(
    ("sql", "counts"),
    [
        ('UPDATE "listing" SET "price" = ?, "updated_at" = ? WHERE ("listing"."id" = ?)', True),
        ('UPDATE "listing" SET "warehouse_ids" = ? WHERE "id" = ?', True),
        ('UPDATE "listing" SET "quantity" = ?, "updated_at" = ? WHERE "status" = ?', False),
        (
            'UPDATE "listing" SET "price" = COALESCE("price", ?), "sync_status" = CASE'
            " WHEN \"version\" = ? THEN 'in_sync' ELSE 'pending' END WHERE \"id\" = ?",
            False,
        ),
        ('UPDATE "product" SET "title" = ? WHERE "id" = ?', False),
    ],
    ids=["price", "allocation", "quantity only", "sets sync_status", "not a listing"],
)
def test_a_listing_write_counts_when_it_changes_desired_columns(sql, counts):
    assert (listing_write(sql) == "listing") is counts


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
            ) or (isinstance(node, ast.ImportFrom) and any(a.name == MARK_NAME for a in node.names))
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
        "def mark_listings_pending(**kw):\n    return 0\n\n\n"
        "def f():\n    mark_listings_pending()\n"
    )
    (tmp_path / "stock.py").write_text(
        "from products import desired_state\n\n\ndef g():\n"
        "    desired_state.mark_listings_pending(product_ids=[1])\n"
    )
    (tmp_path / "other.py").write_text("from products.desired_state import write_product\n")
    assert mark_callers(tmp_path) - {THE_PLACE} == {"stock.py"}
