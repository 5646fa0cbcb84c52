"""A list's ``meta.total``: maintained counts (migration 0015, ``totals.py``) for the
unfiltered and status-filtered big lists, a bounded count for any other filter."""

import importlib
import os
import pathlib
import re
import threading

import peewee
import pytest

from commerce_api import totals
from commerce_api.db import db, is_postgres
from commerce_api.ids import new_id
from commerce_api.products.models import Product
from tests.support.factories import create_product

COUNTED = importlib.import_module("commerce_api.migrations.0015_list_counts").COUNTED


def _total(client, headers, path="/api/products", **params):
    response = client.get(path, headers=headers, query_string=params)
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


def assert_counts_match_rows():
    """Every maintained count equals a COUNT(*) of its rows, for every tenant and status
    (including counts of statuses that no longer have rows: they must be 0)."""
    for table, _key, kind in COUNTED:
        actual = {
            (tenant_id, state): n
            for tenant_id, state, n in db.execute_sql(
                f"SELECT tenant_id, status, COUNT(*) FROM {table} GROUP BY tenant_id, status"
            ).fetchall()
        }
        known = {
            (tenant_id, state)
            for tenant_id, state in db.execute_sql(
                f"SELECT tenant_id, status FROM list_count WHERE kind = {db.obj.param}", (kind,)
            ).fetchall()
        }
        for tenant_id, state in known | set(actual):
            maintained = totals.maintained(tenant_id, kind, state)
            assert maintained == actual.get((tenant_id, state), 0), (kind, tenant_id, state)
    jobs = dict(
        db.execute_sql(
            "SELECT tenant_id, COUNT(*) FROM job WHERE NOT internal GROUP BY tenant_id"
        ).fetchall()
    )
    tenants = {row[0] for row in db.execute_sql("SELECT id FROM tenant").fetchall()}
    for tenant_id in tenants | set(jobs):
        assert totals.maintained(tenant_id, "ai_jobs") == jobs.get(tenant_id, 0), tenant_id


def test_total_follows_writes_through_the_api(client, headers):
    assert _total(client, headers) == 0
    create_product(client, headers, sku="TOT-1")
    assert _total(client, headers) == 1
    create_product(client, headers, sku="TOT-2")
    assert _total(client, headers) == 2
    assert client.delete("/api/products/TOT-1", headers=headers).status_code == 204
    assert _total(client, headers) == 1
    assert _total(client, headers, status="archived") == 1
    assert _total(client, headers, status="active") == 1
    assert _total(client, headers, status="draft") == 0
    assert_counts_match_rows()


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
    assert_counts_match_rows()


def test_a_rolled_back_write_leaves_the_count_as_it_was(app, tenant):
    assert totals.maintained(tenant.id, "products") == 0
    with db.atomic() as transaction:
        Product.create(id=new_id("product"), tenant=tenant.id, sku="TOT-R", title="t")
        assert totals.maintained(tenant.id, "products") == 1  # the transaction sees its own
        transaction.rollback()
    assert totals.maintained(tenant.id, "products") == 0
    assert_counts_match_rows()


def test_an_unfiltered_total_reads_the_count_not_the_rows(app, tenant, client, headers):
    """No COUNT over the product table: one read of the maintained count."""
    for n in range(3):
        create_product(client, headers, sku=f"TOT-S{n}")
    statements = []
    database = db.obj
    database.query_hooks.append(lambda event: statements.append(event.sql))
    try:
        assert _total(client, headers) == 3
        assert _total(client, headers, status="active") == 3
    finally:
        database.query_hooks.pop()
    counting = [sql for sql in statements if "COUNT(" in sql.upper()]
    assert counting == [], counting
    assert sum("list_count" in sql for sql in statements) == 2


def test_a_claim_runs_no_trigger_program_on_sqlite(app):
    """Migrations 0017 and 0019: one trigger counts a job's move into or out of a terminal
    status, and it fires on ``completed_at`` (which a CHECK ties to those statuses), a
    column the claim does not set, so SQLite leaves it out of the claim altogether."""
    if is_postgres():
        pytest.skip("PostgreSQL checks each row trigger's WHEN before calling it")
    rows = db.execute_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'job'"
    ).fetchall()
    assert not [name for name, sql in rows if "UPDATE OF status" in sql]
    assert [name for name, sql in rows if "UPDATE OF completed_at" in sql] == ["job_count_status"]


def test_a_terminal_status_without_completed_at_is_refused(app, tenant):
    """Migration 0019's CHECK: the count relies on it, and nothing goes uncounted."""
    from commerce_api.jobs.models import Job

    job_id = new_id("job")
    Job.create(id=job_id, tenant_id=tenant.id, type="review_sentiment", status="queued")
    for status in ("completed", "failed", "cancelled"):
        with pytest.raises(peewee.IntegrityError), db.atomic():
            Job.update(status=status).where(Job.id == job_id).execute()
    with pytest.raises(peewee.IntegrityError), db.atomic():
        Job.update(completed_at=1).where(Job.id == job_id).execute()  # queued, "completed at"
    Job.update(status="failed", completed_at=1).where(Job.id == job_id).execute()
    assert Job.get_by_id(job_id).status == "failed"


def test_a_job_is_only_ever_inserted_queued():
    """The AI-jobs count has no insert trigger (migration 0018): every job enters the table
    through ``jobs/enqueue.INSERT``, whose status is the literal 'queued'. Another
    insert of a job (which could insert a finished one, uncounted) fails this test."""
    from commerce_api.jobs.enqueue import _CONSTANTS

    assert _CONSTANTS["status"] == "queued"
    root = pathlib.Path(__file__).resolve().parent.parent / "commerce_api"
    pattern = re.compile(
        r"\bJob\.(create|insert|insert_many|insert_from|replace)\(|INSERT INTO job\b"
        # SQL text names the table through the model (commerce_api/sql.py)
        r"|INSERT INTO \{(table\(Job\)|Job)\}|\b(insert_statement|insert_rows)\(Job\b"
    )
    found = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*.py"))
        if pattern.search(path.read_text())
    ]
    assert found == ["jobs/enqueue.py"], found


def test_other_filters_count_up_to_the_cap(app, client, headers, monkeypatch):
    for n in range(5):
        create_product(client, headers, sku=f"CAP-{n}", title=f"Widget {n}")
    create_product(client, headers, sku="OTHER-1", title="Gadget")
    monkeypatch.setitem(app.config, "LIST_COUNT_CAP", 4)
    assert _total(client, headers, search="widget") is None  # 5 matches, past the cap
    body = client.get("/api/products?search=widget&limit=2", headers=headers).get_json()
    assert len(body["data"]) == 2 and body["meta"]["nextCursor"]  # pages are unaffected
    assert _total(client, headers, search="gadget") == 1
    assert _total(client, headers) == 6  # maintained: exact whatever the cap
    monkeypatch.setitem(app.config, "LIST_COUNT_CAP", 5)
    assert _total(client, headers, search="widget") == 5
    monkeypatch.setitem(app.config, "LIST_COUNT_CAP", 0)  # no cap
    assert _total(client, headers, search="widget") == 5


def test_counts_match_the_rows_after_the_demo_and_a_day_of_work(
    app, runner, client, tmp_path, monkeypatch
):
    """The demo writes products, listings, inventory, orders (several statuses) and a
    recalculation's recommendations; then jobs come and go and statuses change."""
    from commerce_api.cli import cli
    from commerce_api.jobs.models import Job
    from commerce_api.orders.models import Order
    from commerce_api.pricing.models import Recommendation

    monkeypatch.setattr(app, "instance_path", str(tmp_path))
    assert runner.invoke(cli, ["demo", "--json"]).exit_code == 0
    assert_counts_match_rows()
    assert db.execute_sql('SELECT COUNT(*) FROM "order"').fetchone()[0] > 0
    tenant_id = db.execute_sql("SELECT tenant_id FROM product LIMIT 1").fetchone()[0]
    # bulk status changes, one statement each
    Order.update(status="cancelled").where(Order.tenant == tenant_id).execute()
    Recommendation.update(status="dismissed").where(Recommendation.tenant == tenant_id).execute()
    Product.update(status="archived").where(
        (Product.tenant == tenant_id) & (Product.sku.in_(["DEMO-TSHIRT-BLK-M"]))
    ).execute()
    # jobs: public ones counted in every status, internal ones never; a job moving through
    # its statuses (and back, and away) is counted once all along. A job is only ever
    # inserted queued (test_a_job_is_only_ever_inserted_queued), then moves.
    finished = ("completed", "failed", "cancelled")

    def move(where, status):  # a terminal status comes with its completed_at (0019)
        stamp = 1_700_000_000_000 if status in finished else None
        Job.update(status=status, completed_at=stamp).where(where).execute()

    ids = {}
    for status in ("queued", "running", "completed", "failed", "cancelled"):
        for internal in (False, True):
            ids[status, internal] = new_id("job")
            Job.create(
                id=ids[status, internal],
                tenant_id=tenant_id,
                type="review_sentiment",
                internal=internal,
                status="queued",
            )
            move(Job.id == ids[status, internal], status)
    assert_counts_match_rows()
    for now, then in (("queued", "running"), ("running", "completed"), ("completed", "queued")):
        move(Job.status == now, then)
        assert_counts_match_rows()
    move(Job.id.in_(list(ids.values())), "failed")
    assert_counts_match_rows()
    Job.delete().where(Job.id == ids["failed", False]).execute()
    assert_counts_match_rows()
    Job.delete().where(Job.tenant_id == tenant_id).execute()
    Product.delete().where((Product.tenant == tenant_id) & (Product.status == "archived")).execute()
    assert_counts_match_rows()
    if is_postgres():
        assert totals.compact() > 0
        assert db.execute_sql("SELECT COUNT(*) FROM list_count_delta").fetchone()[0] == 0
        assert_counts_match_rows()


def test_every_list_with_a_maintained_total_answers_it(client, headers, tenant):
    create_product(client, headers, sku="ALL-1")
    response = client.post(
        "/api/ai-jobs",
        headers=headers,
        json={
            "type": "review_sentiment",
            "params": {"reviews": [{"sku": "ALL-1", "text": "Great"}]},
        },
    )
    assert response.status_code in (201, 202), response.get_json()
    for path, expected in (
        ("/api/products", 1),
        ("/api/orders", 0),
        ("/api/inventory", 0),
        ("/api/pricing/recommendations", 0),
        ("/api/ai-jobs", 1),
    ):
        assert _total(client, headers, path) == expected, path
    assert _total(client, headers, "/api/ai-jobs", status="queued") == 1  # bounded count


@pytest.mark.skipif(
    "postgres" not in os.environ.get("COMMERCE_DATABASE_URL", ""),
    reason="PostgreSQL's deltas and fold",
)
def test_concurrent_writers_of_one_tenant_never_wait_on_a_count(app, tenant):
    """Two transactions of one tenant write statuses in opposite orders at once. Counts kept
    in rows would lock them in opposite orders (a deadlock); deltas lock nothing."""
    barrier = threading.Barrier(2, timeout=10)
    errors = []

    def writer(first, second):
        try:
            with db.connection_context(), db.atomic():
                for status in (first, second):
                    Product.create(
                        id=new_id("product"),
                        tenant=tenant.id,
                        sku=new_id("product")[-12:],
                        title="t",
                        status=status,
                    )
                    barrier.wait()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=writer, args=("active", "draft")),
        threading.Thread(target=writer, args=("draft", "active")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive()
    assert not errors, errors
    assert totals.maintained(tenant.id, "products", "active") == 2
    assert totals.maintained(tenant.id, "products", "draft") == 2
    assert totals.compact() > 0
    assert totals.maintained(tenant.id, "products") == 4
    assert_counts_match_rows()


def test_the_fold_is_a_periodic_task_on_postgresql_only():
    from commerce_api.jobs import registry
    from commerce_api.tasks import list_count_compact, register_all

    saved = dict(registry.PERIODIC_TASKS)
    try:
        registry.PERIODIC_TASKS.pop("list_count_compact", None)
        register_all({"DATABASE_URL": "sqlite:///x.db"})
        assert "list_count_compact" not in registry.PERIODIC_TASKS
        register_all({"DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/test"})
        assert registry.PERIODIC_TASKS["list_count_compact"][1] is list_count_compact
    finally:
        registry.PERIODIC_TASKS.clear()
        registry.PERIODIC_TASKS.update(saved)
