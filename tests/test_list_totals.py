"""A list's ``meta.total`` stays exact while the count is remembered (``db.exact_count``)."""

import threading

from commerce_api.db import db, exact_count, is_postgres
from commerce_api.ids import new_id
from commerce_api.products.models import Product

from .factories import create_product


def _total(client, headers, **params):
    response = client.get("/api/products", headers=headers, query_string=params)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["meta"]["total"]


def _in_other_connection(work):
    """Run ``work`` on another thread, hence another database connection."""
    errors = []

    def run():
        try:
            with db.connection_context():
                work()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive() and not errors, errors


def test_total_follows_writes_through_the_api(client, headers):
    assert _total(client, headers) == 0
    create_product(client, headers, sku="TOT-1")
    assert _total(client, headers) == 1
    assert _total(client, headers) == 1
    create_product(client, headers, sku="TOT-2")
    assert _total(client, headers) == 2
    assert client.delete("/api/products/TOT-1", headers=headers).status_code == 204
    assert _total(client, headers) == 1
    assert _total(client, headers, status="archived") == 1
    assert _total(client, headers, status="active") == 1


def test_total_follows_a_commit_by_another_connection(client, headers, tenant):
    create_product(client, headers, sku="TOT-A")
    create_product(client, headers, sku="TOT-B")
    assert _total(client, headers) == 2

    def archive():
        Product.update(status="archived").where(Product.sku == "TOT-A").execute()

    _in_other_connection(archive)
    assert _total(client, headers) == 1

    def insert():
        Product.create(
            id=new_id("product"), tenant=tenant.id, sku="TOT-C", title="t", status="active"
        )

    _in_other_connection(insert)
    assert _total(client, headers) == 2


def test_a_count_inside_a_rolled_back_transaction_is_not_kept(app, tenant):
    query = Product.select().where(Product.tenant == tenant.id)
    assert exact_count(query) == 0
    with db.atomic() as transaction:
        Product.create(id=new_id("product"), tenant=tenant.id, sku="TOT-R", title="t")
        assert exact_count(query) == 1
        transaction.rollback()
    assert exact_count(query) == 0
    assert exact_count(query) == 0


def test_an_unchanged_database_is_not_counted_again(app, tenant):
    """On SQLite the second count is answered from memory; PostgreSQL always counts."""
    Product.create(id=new_id("product"), tenant=tenant.id, sku="TOT-M", title="t")
    query = Product.select().where(Product.tenant == tenant.id)
    statements = []
    database = db.obj
    database.query_hooks.append(lambda event: statements.append(event.sql))
    try:
        assert exact_count(query) == 1
        counted_first = sum("COUNT" in sql for sql in statements)
        assert exact_count(query) == 1
        counted_second = sum("COUNT" in sql for sql in statements) - counted_first
    finally:
        database.query_hooks.pop()
    assert counted_first == 1
    assert counted_second == (1 if is_postgres() else 0)
