"""Bulk inventory update against single PUTs (issue 3): ``python bench/inventory_bulk.py``.

Starts the real server (gunicorn, 2 sync workers) on a temp SQLite database seeded with
500+ products and one own warehouse, then, from this process over 127.0.0.1 with one
keep-alive connection, times:

  (bulk)   one POST /api/inventory/bulk with 500 items
  (single) 500 PUT /api/inventory/:sku of the same 500 (SKU, warehouse) pairs

Each round sets new quantities, so every item is a real change with its adjustment and
event. The figures are the median over ``--rounds`` rounds (after a warm-up); the bar is
single / bulk >= 10. Exit status 1 when the bar fails or any request did not succeed.
"""

import argparse
import json
import os
import statistics
import sys
import time
from http.client import HTTPConnection

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402

ITEMS = 500
BAR = 10.0


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds (3)")
    parser.add_argument("--products", type=int, default=1000, help="products seeded (1000)")
    return parser.parse_args(argv)


def seed(database_url, products):
    """Schema, tenant, key, products and one own warehouse; returns (tenant, key, wh, skus)."""
    common.init_db(database_url)
    common.bind_database(database_url)
    tenant_id, secret = common.create_tenant_and_key()
    skus = common.seed_products(tenant_id, count=products, listings=False)
    from commerce_api.db import db
    from commerce_api.inventory.services import create_warehouse

    with db.connection_context():
        warehouse = create_warehouse(tenant_id, {"name": "Main warehouse", "type": "own"})
    db.close()
    return tenant_id, secret, warehouse["id"], skus


class Client:
    """One keep-alive HTTP/1.1 connection to 127.0.0.1."""

    def __init__(self, base, headers):
        assert base.startswith(f"http://{common.HOST}:")
        self.conn = HTTPConnection(common.HOST, int(base.rsplit(":", 1)[1]), timeout=60)
        self.headers = {**headers, "Content-Type": "application/json"}

    def request(self, method, path, body):
        self.conn.request(method, path, body=json.dumps(body), headers=self.headers)
        response = self.conn.getresponse()
        payload = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {payload[:300]!r}")
        return json.loads(payload)

    def close(self):
        self.conn.close()


def run_bulk(client, warehouse_id, skus, quantity):
    updates = [
        {
            "sku": sku,
            "warehouse_id": warehouse_id,
            "quantity": quantity + i,
            "reason": "cycle_count",
        }
        for i, sku in enumerate(skus)
    ]
    started = time.perf_counter()
    result = client.request("POST", "/api/inventory/bulk", {"updates": updates})["data"]
    elapsed = time.perf_counter() - started
    if result["updated"] != len(skus) or result["failed"]:
        raise RuntimeError(f"bulk did not update every item: {result}")
    return elapsed


def run_singles(client, warehouse_id, skus, quantity):
    started = time.perf_counter()
    for i, sku in enumerate(skus):
        body = {"warehouse_id": warehouse_id, "quantity": quantity + i, "reason": "cycle_count"}
        record = client.request("PUT", f"/api/inventory/{sku}", body)["data"]
        if record["total_on_hand"] != quantity + i:
            raise RuntimeError(f"PUT {sku} did not set {quantity + i}: {record}")
    return time.perf_counter() - started


def main(argv=None):
    args = parse_args(argv)
    with common.temp_directory() as tmp:
        database_url = common.sqlite_url(os.path.join(tmp, "bench.db"))
        tenant_id, secret, warehouse_id, skus = seed(database_url, max(args.products, ITEMS + 50))
        measured, warmup = skus[:ITEMS], skus[ITEMS : ITEMS + 50]
        env = common.child_env(database_url, RATE_LIMIT_ENABLED=0)
        headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant_id}
        with common.gunicorn("wsgi:app", env, workers=2) as base:
            client = Client(base, headers)
            try:
                # warm both workers' caches and code paths on other SKUs
                for _ in range(2):
                    run_bulk(client, warehouse_id, warmup, 1)
                    run_singles(client, warehouse_id, warmup, 1)
                # first stock of the measured SKUs, so every round updates existing rows
                run_bulk(client, warehouse_id, measured, 5)
                bulk_times, single_times = [], []
                for round_number in range(args.rounds):
                    base_quantity = 10 + 1000 * round_number
                    bulk_times.append(run_bulk(client, warehouse_id, measured, base_quantity))
                    single_times.append(
                        run_singles(client, warehouse_id, measured, base_quantity + 500)
                    )
            finally:
                client.close()
    bulk, single = statistics.median(bulk_times), statistics.median(single_times)
    ratio = single / bulk
    print(f"items per case:        {ITEMS} (SQLite, gunicorn -w 2, keep-alive, 127.0.0.1)")
    print(f"rounds:                {args.rounds} (median reported)")
    bulk_rounds = ", ".join(f"{t * 1000:.1f}" for t in bulk_times)
    single_rounds = ", ".join(f"{t * 1000:.1f}" for t in single_times)
    print(f"bulk, 1 request:       {bulk * 1000:8.1f} ms   (rounds: {bulk_rounds})")
    print(f"single PUTs, 500 req:  {single * 1000:8.1f} ms   (rounds: {single_rounds})")
    per_bulk, per_single = bulk / ITEMS * 1e6, single / ITEMS * 1e6
    print(f"per item:              bulk {per_bulk:.0f} us, single {per_single:.0f} us")
    verdict = "PASS" if ratio >= BAR else "FAIL"
    print(f"ratio single/bulk:     {ratio:8.1f}x   (bar: >= {BAR:.0f}x) {verdict}")
    return 0 if ratio >= BAR else 1


if __name__ == "__main__":
    sys.exit(main())
