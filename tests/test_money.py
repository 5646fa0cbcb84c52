"""Money is exact: integer cents on SQLite, NUMERIC on PostgreSQL, rounded half up."""

import importlib
from decimal import Decimal

import pytest

from commerce_api.db import BaseModel, MoneyField, db, is_postgres
from commerce_api.orders.ingest import upsert_order
from commerce_api.orders.models import Order, OrderLine
from tests.support.orders_support import order_body


def _models(base=BaseModel):
    for model in base.__subclasses__():
        yield model
        yield from _models(model)


def money_columns():
    """Every money column of every table (the app has imported every domain's models;
    abstract bases have no table)."""
    tables = set(db.get_tables())
    return sorted(
        {
            (model._meta.table_name, field.column_name)
            for model in _models()
            for field in model._meta.sorted_fields
            if isinstance(field, MoneyField) and model._meta.table_name in tables
        }
    )


def test_every_money_column_is_a_money_field(app):
    MONEY_COLUMNS = money_columns()
    assert {("product", "cost_price"), ("listing", "price")} <= set(MONEY_COLUMNS)
    assert any(table == "pricing_recommendation" for table, _ in MONEY_COLUMNS)
    assert len(MONEY_COLUMNS) >= 8


@pytest.mark.skipif(
    "postgres" in __import__("os").environ.get("COMMERCE_DATABASE_URL", ""),
    reason="typeof() is SQLite's",
)
def test_sqlite_stores_integers_never_floats(client, headers, tenant):
    client.post(
        "/api/products",
        json={"sku": "MUG-1", "title": "Mug", "cost_price": 0.1},
        headers=headers,
    )
    upsert_order(tenant.id, order_body("M-1"), source="import")
    for table, column in money_columns():
        kinds = {
            row[0] for row in db.execute_sql(f'SELECT typeof("{column}") FROM "{table}"').fetchall()
        }
        assert kinds <= {"integer", "null"}, (table, column, kinds)
    raw = db.execute_sql('SELECT cost_price FROM "product"').fetchone()[0]
    assert raw == 10  # cents
    product = client.get("/api/products/MUG-1", headers=headers).get_json()["data"]
    assert product["cost_price"] == 0.1


def test_a_thousand_lines_of_ten_cents_add_up_exactly(tenant):
    order_ids = []
    for n in range(2):  # an order has at most 500 lines
        lines = [
            {
                "external_line_item_id": f"L{i}",
                "sku": "MUG-1",
                "title": "Mug",
                "quantity": 1,
                "unit_price": 0.1,
                "line_total": 0.1,
            }
            for i in range(500)
        ]
        body = order_body(f"M-CENTS-{n}", total_amount=50.0, line_items=lines)
        order_ids.append(upsert_order(tenant.id, body, source="import")[1])
        assert Order.get_by_id(order_ids[-1]).total_amount == Decimal("50.00")
    totals = [line.line_total for line in OrderLine.select().where(OrderLine.order << order_ids)]
    assert len(totals) == 1000 and sum(totals) == Decimal("100.00")
    marks = ", ".join([db.param] * len(order_ids))
    (summed,) = db.execute_sql(
        f'SELECT SUM(line_total) FROM "{OrderLine._meta.table_name}" WHERE order_id IN ({marks})',
        order_ids,
    ).fetchone()
    assert summed == (Decimal("100.00") if is_postgres() else 10000)  # cents on SQLite


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("0.005", "0.01"),
        ("0.015", "0.02"),
        ("0.025", "0.03"),
        ("2.345", "2.35"),
        ("2.3449", "2.34"),
    ],
)
def test_money_rounds_half_up(given, stored):
    field = MoneyField()
    assert field.python_value(field.db_value(Decimal(given))) == Decimal(stored)


def test_order_lines_round_half_up(tenant):
    """A unit price derived from the line total rounds half up, as everything else does."""
    body = order_body(
        "M-HALF",
        total_amount=0.2,
        line_items=[
            {"external_line_item_id": "L1", "sku": "MUG-1", "title": "Mug", "quantity": 8,
             "line_total": 0.2},
        ],
    )  # fmt: skip
    _, order_id = upsert_order(tenant.id, body, source="import")
    (line,) = OrderLine.select().where(OrderLine.order == order_id)
    assert line.unit_price == Decimal("0.03")  # 0.025 half up; half even would give 0.02


@pytest.mark.skipif(
    "postgres" in __import__("os").environ.get("COMMERCE_DATABASE_URL", ""),
    reason="the conversion is SQLite's",
)
def test_the_migration_turns_stored_floats_into_cents(client, headers):
    client.post("/api/products", json={"sku": "A", "title": "A"}, headers=headers)
    db.execute_sql('UPDATE "product" SET cost_price = 12.35')
    migration = importlib.import_module("commerce_api.migrations.0013_money_cents")
    migration.up(None, db)
    assert db.execute_sql('SELECT typeof(cost_price), cost_price FROM "product"').fetchone() == (
        "integer",
        1235,
    )
    product = client.get("/api/products/A", headers=headers).get_json()["data"]
    assert product["cost_price"] == 12.35


@pytest.mark.skipif(
    "postgres" in __import__("os").environ.get("COMMERCE_DATABASE_URL", ""),
    reason="typeof() is SQLite's",
)
def test_every_money_column_holds_integers_after_the_demo(app, runner, tmp_path, monkeypatch):
    """The demo writes products, listings, orders, offers and rules; a recalculation then
    writes recommendations: no money column holds a float anywhere."""
    from commerce_api.cli import cli

    monkeypatch.setattr(app, "instance_path", str(tmp_path))
    assert runner.invoke(cli, ["demo", "--json"]).exit_code == 0
    filled = set()
    for table, column in money_columns():
        kinds = {
            row[0] for row in db.execute_sql(f'SELECT typeof("{column}") FROM "{table}"').fetchall()
        }
        assert kinds <= {"integer", "null"}, (table, column, kinds)
        if "integer" in kinds:
            filled.add(table)
    assert {"product", "listing", "order", "order_line", "competitor_price"} <= filled
