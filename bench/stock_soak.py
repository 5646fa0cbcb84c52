"""The stock soak (issue 34), run by hand: ``.venv/bin/python bench/stock_soak.py``.

Runs the API (gunicorn, 2 workers) and one ``commerce-api worker`` on a fresh database
(``--engine sqlite``, ``postgres`` or ``both``) for one tenant with two own warehouses,
``--components`` component SKUs and ``--bundles`` bundles of 2-3 of them, every product
listed on three marketplaces (fakes on 127.0.0.1, the http connector's contract). For
``--duration`` seconds, client threads change stock through the API (relative
adjustments, absolute levels, bulk deltas) and allocation rules on the listings
(caps, shares, fixed quantities, warehouse subsets), while marketplace orders arrive for
components and bundles (in this process, as a pull would bring them) and earlier ones are
shipped or cancelled.

Then it lets the worker settle and checks, with a reference of its own (DESIGN 14 read
literally, over the stock rows as they end):
  - every listing's last pushed quantity equals the formula over the final stock;
  - no stock row's reserved is below 0 or above on hand, no reservation below 0;
  - stock equals the ledger (every row, every record);
  - no answer was a 500.
It prints a summary per engine with a violations count; exit status 1 when any.
"""

import argparse
import collections
import contextlib
import os
import random
import subprocess
import sys
import threading
import time
import uuid

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402

from tests.support.listing_marketplace import ListingMarketplace  # noqa: E402

PG_ADMIN_URL = os.environ.get("SOAK_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
CHANNELS = ("ebay", "amazon_de", "shopify")
SERVICE_CONFIG = {"RATE_LIMIT_ENABLED": 0, "ORDER_PULL_INTERVAL_SECONDS": 3600}
WORKER_CONFIG = {
    "WORKER_POLL_INTERVAL": 0.05,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.05,
    "MARKETPLACE_TENANT_CONCURRENCY": 8,
    "MARKETPLACE_CONNECTION_CONCURRENCY": 4,
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--duration", type=float, default=60, help="seconds of load")
    parser.add_argument("--components", type=int, default=8)
    parser.add_argument("--bundles", type=int, default=6)
    parser.add_argument("--clients", type=int, default=4, help="client threads")
    parser.add_argument("--settle", type=float, default=120, help="seconds to settle at most")
    parser.add_argument("--seed", type=int, default=34)
    return parser.parse_args(argv)


@contextlib.contextmanager
def database(engine, directory):
    if engine == "sqlite":
        yield common.sqlite_url(os.path.join(directory, "soak.db"))
        return
    import psycopg2

    name = f"stock_soak_{uuid.uuid4().hex[:10]}"
    admin = psycopg2.connect(PG_ADMIN_URL)
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{name}"')
    try:
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        from commerce_api.db import db

        with contextlib.suppress(Exception):
            db.close()
            db.obj.close_all()
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


# Setup -------------------------------------------------------------------------------------


class Shop:
    def __init__(self, args, rng, fakes):
        from commerce_api.db import db
        from commerce_api.inventory.services import create_warehouse
        from commerce_api.marketplaces.services import connect_marketplace

        with db.connection_context():
            self.tenant_id, secret = common.create_tenant_and_key()
            self.warehouses = [
                create_warehouse(self.tenant_id, {"name": name})["id"] for name in ("EU", "US")
            ]
            for channel, fake in fakes.items():
                connect_marketplace(
                    self.tenant_id,
                    channel,
                    "http",
                    base_url=fake.url,
                    created_by="soak",
                    allow_private=True,
                )
        self.headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": self.tenant_id}
        self.components = [f"C-{n:02d}" for n in range(args.components)]
        self.bundles = {
            f"SET-{n:02d}": {
                sku: rng.randint(1, 3) for sku in rng.sample(self.components, rng.randint(2, 3))
            }
            for n in range(args.bundles)
        }
        self.skus = [*self.components, *self.bundles]


def seed(base, shop, rng):
    session = requests.Session()
    session.headers.update(shop.headers)
    for sku in shop.components:
        body = {"sku": sku, "title": sku, "status": "active"}
        assert session.post(f"{base}/api/products", json=body).status_code == 201
        for warehouse in shop.warehouses:
            body = {
                "warehouse_id": warehouse,
                "quantity": rng.randint(5, 40),
                "reason": "cycle_count",
            }
            assert session.put(f"{base}/api/inventory/{sku}", json=body).status_code == 200
    for sku, recipe in shop.bundles.items():
        components = [{"sku": c, "quantity": q} for c, q in recipe.items()]
        body = {"sku": sku, "title": sku, "status": "active", "components": components}
        response = session.post(f"{base}/api/products", json=body)
        assert response.status_code == 201, response.text
    for sku in shop.skus:  # nothing is pushed without a price someone chose
        for channel in CHANNELS:
            response = session.patch(
                f"{base}/api/products/{sku}/listings/{channel}", json={"price": 12.5}
            )
            assert response.status_code == 200, response.text
        assert session.post(f"{base}/api/products/{sku}/sync").status_code == 202
    session.close()


# Load --------------------------------------------------------------------------------------


class Client:
    def __init__(self, base, shop, rng, statuses, stop):
        self.base, self.shop, self.rng, self.statuses, self.stop = base, shop, rng, statuses, stop

    def run(self):
        session = requests.Session()
        session.headers.update(self.shop.headers)
        while not self.stop.is_set():
            try:
                method, path, body = self.operation()
                response = session.request(method, self.base + path, json=body, timeout=30)
                self.statuses[response.status_code] += 1
            except requests.RequestException as error:
                self.statuses[f"exception {type(error).__name__}"] += 1
        session.close()

    def operation(self):
        rng, shop = self.rng, self.shop
        sku = rng.choice(shop.components)
        warehouse = rng.choice(shop.warehouses)
        roll = rng.random()
        if roll < 0.4:
            body = {"warehouse_id": warehouse, "delta": rng.choice((-3, -2, -1, 1, 2, 5)),
                    "reason": "correction"}  # fmt: skip
            return "POST", f"/api/inventory/{sku}/adjustments", body
        if roll < 0.55:
            body = {"warehouse_id": warehouse, "quantity": rng.randint(0, 30),
                    "reason": "cycle_count"}  # fmt: skip
            return "PUT", f"/api/inventory/{sku}", body
        if roll < 0.7:
            updates = [
                {"sku": rng.choice(shop.components), "warehouse_id": rng.choice(shop.warehouses),
                 "delta": rng.choice((-2, -1, 1, 3)), "reason": "correction"}
                for _ in range(rng.randint(2, 6))
            ]  # fmt: skip
            return "POST", "/api/inventory/bulk", {"updates": updates}
        listing_sku = rng.choice(shop.skus)
        channel = rng.choice(CHANNELS)
        rule = rng.choice(
            [
                {"max_quantity": rng.randint(0, 15), "fixed_quantity": None},
                {"allocation_pct": rng.randint(1, 100)},
                {"stock_buffer": rng.randint(0, 4)},
                {"fixed_quantity": rng.randint(0, 9), "max_quantity": None},
                {"fixed_quantity": None},
                {"warehouse_ids": [rng.choice(shop.warehouses)]},
                {"warehouse_ids": None},
            ]
        )
        return "PATCH", f"/api/products/{listing_sku}/listings/{channel}", rule


def orders(shop, rng, stop, counts):
    """Marketplace orders for components and bundles; earlier ones shipped or cancelled."""
    from commerce_api.db import db
    from commerce_api.errors import ApiError
    from commerce_api.orders.ingest import upsert_order

    open_orders = []
    n = 0
    while not stop.is_set():
        n += 1
        sku = rng.choice(shop.skus)
        quantity = rng.randint(1, 2)
        body = {
            "external_order_id": f"SOAK-{n}",
            "marketplace": rng.choice(CHANNELS),
            "status": "pending",
            "fulfillment_method": "FBM",
            "total_amount": 10.0 * quantity,
            "currency": "EUR",
            "created_at": "2026-11-27T10:00:00.000Z",
            "line_items": [
                {
                    "external_line_item_id": f"SOAK-{n}-1",
                    "sku": sku,
                    "title": sku,
                    "quantity": quantity,
                    "unit_price": 10.0,
                    "line_total": 10.0 * quantity,
                }
            ],  # fmt: skip
            "shipping_address": {
                "name": "A",
                "line1": "1 Road",
                "line2": None,
                "city": "Town",
                "region": "R",
                "postal_code": "1",
                "country": "DE",
            },  # fmt: skip
        }
        try:
            with db.connection_context():
                upsert_order(shop.tenant_id, body, source="import", created_by="soak")
                counts["orders"] += 1
                open_orders.append(body)
                if len(open_orders) > 3:
                    done = open_orders.pop(rng.randrange(len(open_orders)))
                    status = rng.choice(("shipped", "cancelled"))
                    upsert_order(
                        shop.tenant_id, {**done, "status": status}, source="import", created_by="s"
                    )
                    counts[status] += 1
        except ApiError as error:
            counts[f"order {error.code}"] += 1
        except Exception as error:  # noqa: BLE001 - a violation, counted and checked
            counts[f"order exception {type(error).__name__}"] += 1
        time.sleep(0.2)


# Checks ------------------------------------------------------------------------------------


def reference_quantities(shop):
    """{(channel, sku): quantity} by DESIGN 14, from the final stock rows."""
    from commerce_api.db import db
    from commerce_api.inventory.models import Stock, Warehouse
    from commerce_api.products.models import Listing, Product

    with db.connection_context():
        own = {
            w.id
            for w in Warehouse.select().where(
                (Warehouse.tenant == shop.tenant_id)
                & (Warehouse.type == "own")
                & Warehouse.is_active
            )
        }
        sku_of = dict(
            Product.select(Product.id, Product.sku).where(Product.tenant == shop.tenant_id).tuples()
        )
        archived = {
            sku_of[p] for (p,) in Product.select(Product.id).where(
                (Product.tenant == shop.tenant_id) & (Product.status == "archived")).tuples()
        }  # fmt: skip
        stock = collections.defaultdict(int)
        for row in Stock.select().where(Stock.tenant == shop.tenant_id):
            if row.warehouse_id in own:
                stock[(row.sku, row.warehouse_id)] += row.on_hand - row.reserved
        expected = {}
        for listing in Listing.select().where(Listing.tenant == shop.tenant_id):
            sku = sku_of[listing.product_id]
            pool = own if listing.warehouse_ids is None else set(listing.warehouse_ids)

            def available(s, pool=pool):
                return sum(stock[(s, w)] for w in pool)

            if sku in shop.bundles:
                recipe = shop.bundles[sku]
                if any(c in archived for c in recipe):
                    units = 0
                else:
                    units = min(available(c) // q for c, q in recipe.items())
            else:
                units = available(sku)
            if listing.fixed_quantity is not None:
                quantity = listing.fixed_quantity
            else:
                quantity = units * listing.allocation_pct // 100 - listing.stock_buffer
                if listing.max_quantity is not None:
                    quantity = min(quantity, listing.max_quantity)
                quantity = max(0, quantity)
            expected[(listing.marketplace, sku)] = (quantity, listing.sync_status)
    return expected


def check(shop, fakes, statuses, operations):
    from commerce_api.db import db
    from commerce_api.inventory.models import Reservation, Stock
    from tests.support.inventory_helpers import check_ledger

    violations, counts = [], collections.Counter()
    for (channel, sku), (quantity, sync_status) in reference_quantities(shop).items():
        counts["listings"] += 1
        pushed = fakes[channel].last_quantity(sku)
        if pushed != quantity or sync_status != "in_sync":
            violations.append(("listing", channel, sku, pushed, quantity, sync_status))
    with db.connection_context():
        for row in Stock.select().where(Stock.tenant == shop.tenant_id):
            counts["stock_rows"] += 1
            if not 0 <= row.reserved <= row.on_hand:
                violations.append(("stock", row.sku, row.warehouse_id, row.on_hand, row.reserved))
        for reservation in Reservation.select().where(Reservation.tenant == shop.tenant_id):
            counts["reservations"] += 1
            if reservation.remaining < 0:
                violations.append(("reservation", reservation.reference, reservation.sku))
        try:
            counts["ledger_entries"] = check_ledger()
        except AssertionError as error:
            violations.append(("ledger", str(error)[:300]))
    for name, number in operations.items():
        if name.startswith("order exception"):
            violations.append((name, number))
    for status, number in statuses.items():
        if isinstance(status, str) or status >= 500:
            violations.append(("http", status, number))
    return violations, counts


def settled(shop):
    from commerce_api.db import db
    from commerce_api.products.models import Listing

    with db.connection_context():
        return not (
            Listing.select()
            .where((Listing.tenant == shop.tenant_id) & (Listing.sync_status != "in_sync"))
            .exists()
        )


def run_engine(engine, args):
    rng = random.Random(args.seed)
    with contextlib.ExitStack() as stack:
        directory = stack.enter_context(common.temp_directory("commerce-stock-soak-"))
        url = stack.enter_context(database(engine, directory))
        fakes = {c: stack.enter_context(ListingMarketplace(delay=0.02)) for c in CHANNELS}
        common.init_db(url)
        common.bind_database(url)
        shop = Shop(args, rng, fakes)
        env = common.child_env(url, **SERVICE_CONFIG)
        env["COMMERCE_LOG_LEVEL"] = "ERROR"
        statuses, counts = collections.Counter(), collections.Counter()
        base = stack.enter_context(common.gunicorn("wsgi:app", env, workers=2))
        worker = subprocess.Popen(
            [sys.executable, "-m", "commerce_api.cli", "worker", "--concurrency", "1"],
            cwd=common.ROOT,
            env=common.child_env(url, **SERVICE_CONFIG, **WORKER_CONFIG),
            start_new_session=True,
        )
        stack.callback(common.stop_process, worker)
        seed(base, shop, rng)
        from tests.support.waiting import wait_for

        def listed():
            from commerce_api.db import db
            from commerce_api.products.models import Listing

            with db.connection_context():
                return Listing.select().where(Listing.external_id.is_null(False)).count()

        wait_for(lambda: listed() == len(shop.skus) * len(CHANNELS), 60)
        stop = threading.Event()
        threads = [
            threading.Thread(
                target=Client(base, shop, random.Random(rng.random()), statuses, stop).run
            )
            for _ in range(args.clients)
        ]
        threads.append(
            threading.Thread(target=orders, args=(shop, random.Random(rng.random()), stop, counts))
        )
        started = time.monotonic()
        for thread in threads:
            thread.start()
        time.sleep(args.duration)
        stop.set()
        for thread in threads:
            thread.join(60)
        load_seconds = time.monotonic() - started
        settle_started = time.monotonic()
        while time.monotonic() - settle_started < args.settle and not settled(shop):
            time.sleep(0.5)
        time.sleep(1.0)  # a push after the listing settled would show now
        settle_seconds = time.monotonic() - settle_started
        violations, checked = check(shop, fakes, statuses, counts)
    return {
        "engine": engine,
        "load_seconds": round(load_seconds, 1),
        "settle_seconds": round(settle_seconds, 1),
        "operations": dict(counts),
        "http_statuses": {str(k): v for k, v in sorted(statuses.items(), key=str)},
        "pushes": {c: len(f.pushes) for c, f in fakes.items()},
        "checked": dict(checked),
        "violations": len(violations),
        "violation_samples": violations[:20],
    }


def main(argv=None):
    args = parse_args(argv)
    engines = ("sqlite", "postgres") if args.engine == "both" else (args.engine,)
    failed = False
    for engine in engines:
        summary = run_engine(engine, args)
        print(f"== stock soak summary: {engine} ==")
        for key, value in summary.items():
            print(f"  {key}: {value}")
        print(f"  RESULT: {'OK' if summary['violations'] == 0 else 'VIOLATIONS'}", flush=True)
        failed = failed or summary["violations"] > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
