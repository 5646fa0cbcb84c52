"""Read paths that stock features touch (issue 34): ``.venv/bin/python bench/stock_reads.py``.

In-process (Flask test client, no network) on a temporary SQLite database seeded with
``--products`` products, each with stock in two own warehouses and listed on two
marketplaces: ``GET /api/products/:sku`` (Get Product with its listings) and
``GET /api/inventory?limit=50`` (first page of the inventory list), in alternating slices,
``--seconds`` each in total. Prints requests/s and p50/p99 per case. Used to compare a
branch with its base (run it on both; the numbers are only comparable on one machine at
one time).
"""

import argparse
import os
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--products", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=10, help="per case, in total")
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
        for path in cases.values():  # warm-up
            for _ in range(50):
                assert client.get(path(), headers=headers).status_code == 200
        slices = 10
        for _ in range(slices):
            for name, path in cases.items():
                until = time.perf_counter() + args.seconds / slices
                while time.perf_counter() < until:
                    started = time.perf_counter()
                    response = client.get(path(), headers=headers)
                    timings[name].append(time.perf_counter() - started)
                    assert response.status_code == 200
    print(f"stock reads: sqlite, in-process, {args.products} products; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
    for name, values in timings.items():
        values.sort()
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        print(f"{name:30s} {len(values) / sum(values):7.0f} req/s  p50 "
              f"{1000 * statistics.median(values):.2f} ms  p99 {1000 * p99:.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
