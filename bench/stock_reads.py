"""Read paths that stock features touch (issue 34): ``.venv/bin/python bench/stock_reads.py``.

In-process (Flask test client, no network) on a temporary SQLite database seeded with
``--products`` products, each with stock in two own warehouses and listed on two
marketplaces: ``GET /api/products/:sku`` (Get Product with its listings) and
``GET /api/inventory?limit=50`` (first page of the inventory list), in alternating slices,
``--seconds`` each in total. Prints requests/s, p50/p99 and the process CPU time per
request per case (CPU time is the steadier figure on a shared, loaded machine). Used to
compare a branch with its base (run it on both; the numbers are only comparable on one
machine at one time).

``--profile N`` instead runs N requests per case under cProfile and prints, per case, the
SQL statements and rows fetched per request and the hottest functions (``--top``), so two
trees can be compared by work done rather than by noisy timings (run the same script with
the other tree's interpreter: ``/other/.venv/bin/python bench/stock_reads.py --profile 500``).
"""

import argparse
import cProfile
import io
import os
import pstats
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402


def seed(count):
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.inventory.services import bulk_set_stock, create_warehouse
    from commerce_api.products.models import Listing, Product

    tenant_id, secret = common.create_tenant_and_key()
    now = int(time.time() * 1000)
    skus = [f"READ-{n:05d}" for n in range(count)]
    with db.connection_context():
        products, listings = [], []
        for sku in skus:
            product_id = new_id("product")
            products.append(
                {"id": product_id, "tenant": tenant_id, "sku": sku, "title": f"Item {sku}",
                 "status": "active", "images": [], "created_at": now, "updated_at": now}
            )  # fmt: skip
            for marketplace in ("ebay", "amazon_de"):
                listings.append(
                    {"id": new_id("listing"), "tenant": tenant_id, "product": product_id,
                     "marketplace": marketplace, "external_id": f"E-{sku}", "price": "9.99",
                     "currency": "EUR", "quantity": 3, "created_at": now, "updated_at": now}
                )  # fmt: skip
        with db.atomic():
            common._insert_many(db, Product, products)
            common._insert_many(db, Listing, listings)
        warehouses = [create_warehouse(tenant_id, {"name": n})["id"] for n in ("EU", "US")]
        items = [
            {"index": i, "sku": sku, "warehouse_id": w, "quantity": 5, "reason": "cycle_count"}
            for i, (sku, w) in enumerate((s, w) for s in skus for w in warehouses)
        ]
        for start in range(0, len(items), 500):
            bulk_set_stock(tenant_id, items[start : start + 500], "bench")
    return {"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant_id}, skus


class _CountingCursor:
    """Delegates to a DB-API cursor and counts the rows fetched through it."""

    def __init__(self, cursor, counts):
        self._cursor, self._counts = cursor, counts

    def __getattr__(self, name):
        return getattr(self._cursor, name)

    def __iter__(self):
        for row in self._cursor:
            self._counts["rows"] += 1
            yield row

    def fetchone(self):
        row = self._cursor.fetchone()
        self._counts["rows"] += row is not None
        return row

    def fetchmany(self, *args):
        rows = self._cursor.fetchmany(*args)
        self._counts["rows"] += len(rows)
        return rows

    def fetchall(self):
        rows = self._cursor.fetchall()
        self._counts["rows"] += len(rows)
        return rows


def count_sql(database, counts):
    """Wrap ``database.execute_sql`` so statements, rows and distinct SQL texts are counted."""
    execute_sql = database.execute_sql

    def counting(sql, params=None, *args, **kwargs):
        counts["statements"] += 1
        counts["texts"][sql.split(" WHERE ")[0][:120]] = None
        return _CountingCursor(execute_sql(sql, params, *args, **kwargs), counts)

    database.execute_sql = counting


def profile(client, headers, cases, requests, top):
    from commerce_api.db import db

    for name, path in cases.items():
        counts = {"statements": 0, "rows": 0, "texts": {}}
        real = db.obj
        count_sql(real, counts)
        profiler = cProfile.Profile(time.process_time)  # CPU time: other processes don't count
        started = time.process_time()
        profiler.enable()
        for _ in range(requests):
            assert client.get(path(), headers=headers).status_code == 200
        profiler.disable()
        elapsed = time.process_time() - started
        del real.execute_sql
        print(f"== {name}: {requests} requests, {1000 * elapsed / requests:.2f} ms CPU "
              f"each under the profiler; per request: {counts['statements'] / requests:.1f} SQL "
              f"statements, {counts['rows'] / requests:.1f} rows")  # fmt: skip
        for text in counts["texts"]:
            print(f"   sql: {text}")
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
        print(out.getvalue())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--products", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=10, help="per case, in total")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="profile N requests per case instead of timing them",
    )
    parser.add_argument("--top", type=int, default=40, help="functions listed by --profile")
    args = parser.parse_args()
    with common.temp_directory() as tmp:
        url = common.sqlite_url(os.path.join(tmp, "reads.db"))
        common.init_db(url)
        os.environ["COMMERCE_DATABASE_URL"] = url
        os.environ["COMMERCE_RATE_LIMIT_ENABLED"] = "0"
        os.environ["COMMERCE_LOG_LEVEL"] = "ERROR"
        from commerce_api import create_app

        app = create_app()
        headers, skus = seed(args.products)
        client = app.test_client()
        rng = random.Random(1)
        cases = {
            "GET /api/products/:sku": lambda: f"/api/products/{rng.choice(skus)}",
            "GET /api/inventory?limit=50": lambda: "/api/inventory?limit=50",
        }
        timings = {name: [] for name in cases}
        cpu = dict.fromkeys(cases, 0.0)  # process CPU time: what other processes don't inflate
        for path in cases.values():  # warm-up
            for _ in range(50):
                assert client.get(path(), headers=headers).status_code == 200
        if args.profile:
            profile(client, headers, cases, args.profile, args.top)
            return
        slices = 10
        for _ in range(slices):
            for name, path in cases.items():
                until = time.perf_counter() + args.seconds / slices
                while time.perf_counter() < until:
                    started, started_cpu = time.perf_counter(), time.process_time()
                    response = client.get(path(), headers=headers)
                    timings[name].append(time.perf_counter() - started)
                    cpu[name] += time.process_time() - started_cpu
                    assert response.status_code == 200
    print(f"stock reads: sqlite, in-process, {args.products} products; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
    for name, values in timings.items():
        values.sort()
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        print(f"{name:30s} {len(values) / sum(values):7.0f} req/s  p50 "
              f"{1000 * statistics.median(values):.2f} ms  p99 {1000 * p99:.2f} ms  "
              f"CPU {1000 * cpu[name] / len(values):.3f} ms/req")  # fmt: skip


if __name__ == "__main__":
    main()
