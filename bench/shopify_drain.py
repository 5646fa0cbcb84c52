"""Shopify drain benchmark (issue 33): ``.venv/bin/python bench/shopify_drain.py``.

A real ``commerce-api worker`` process pushes ``--listings`` (10,000) pending listings of
one tenant to the Admin GraphQL contract fake (tests/support/shopify_fake.py) on
127.0.0.1, answering each query in ``--delay`` (50 ms), with the fake's cost bucket at
``--maximum`` (100) points restoring ``--restore`` (50) a second. The listings are linked
already (variant and inventory item on the listing, as the first push leaves them) and in
sync at quantity 0; bulk stock changes (the inventory service, 500 at a time) make them all
pending before the worker starts, and the drain is timed from the worker's start. The
worker sends their quantities with ``inventorySetQuantities`` (250 a call, with compare
quantities), drawing each query's cost from the connection's budget.

Bars (DESIGN 13): all in sync within 60 s, at the quantity wanted, with the fake
reporting 0 throttled queries and 0 refused documents. Exit status 1 when a bar fails.
SQLite (a temporary file).
"""

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (  # noqa: E402
    ROOT,
    _insert_many,
    bind_database,
    child_env,
    init_db,
    sqlite_url,
    stop_process,
    temp_directory,
)

from tests.support.shopify_fake import ShopifyFake  # noqa: E402
from tests.support.waiting import wait_for  # noqa: E402

BAR_DRAIN_SECONDS = 60
MARKETPLACE = "shopify"


def setup(fake, count):
    """A tenant with ``count`` products linked to variants of the fake, in sync at 0."""
    from commerce_api.auth.services import create_tenant
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.inventory.services import create_warehouse
    from commerce_api.marketplaces.services import connect_marketplace
    from commerce_api.products.models import Listing, Product

    with db.connection_context():
        tenant = create_tenant("Shopify drain", "enterprise")
        warehouse = create_warehouse(tenant.id, {"name": "Main", "type": "own"})["id"]
        connect_marketplace(
            tenant.id,
            MARKETPLACE,
            "shopify",
            settings=fake.settings(warehouse),
            credentials=fake.credentials(),
            allow_private=True,
        )
        now = int(time.time() * 1000)
        products, listings = [], []
        for n in range(count):
            sku = f"DRAIN-{n:05d}"
            variant = fake.variants[fake.add_variant(sku, price="19.99", quantity=0)]
            product_id = new_id("product")
            products.append(
                {"id": product_id, "tenant": tenant.id, "sku": sku, "title": sku,
                 "status": "active", "images": [], "created_at": now, "updated_at": now}
            )  # fmt: skip
            refs = {
                "product": variant["product"]["id"],
                "variant": variant["id"],
                "inventory_item": variant["inventoryItem"]["id"],
                "price": "19.99",
                "status": "active",
                "location": fake.location,
            }
            listings.append(
                {"id": new_id("listing"), "tenant": tenant.id, "product": product_id,
                 "marketplace": MARKETPLACE, "external_id": variant["id"], "price": "19.99",
                 "currency": "USD", "quantity": 0, "external_refs": refs,
                 "last_synced_at": now, "created_at": now, "updated_at": now}
            )  # fmt: skip
        with db.atomic():
            _insert_many(db, Product, products)
            _insert_many(db, Listing, listings)
    return tenant.id, warehouse, [p["sku"] for p in products]


def make_pending(tenant_id, warehouse, skus, quantity):
    """One stock change per SKU through the inventory service (500 at a time, as the
    bulk API takes them): every listing becomes pending in the changing transaction."""
    from commerce_api.db import db
    from commerce_api.inventory.services import bulk_set_stock

    with db.connection_context():
        for start in range(0, len(skus), 500):
            items = [
                {"index": n, "sku": sku, "warehouse_id": warehouse, "quantity": quantity,
                 "reason": "supplier_receipt"}
                for n, sku in enumerate(skus[start : start + 500])
            ]  # fmt: skip
            result = bulk_set_stock(tenant_id, items, "bench")
            assert result["failed"] == 0, result


def counts(tenant_id):
    from commerce_api.db import db
    from commerce_api.products.models import Listing

    with db.connection_context():
        rows = Listing.select(Listing.sync_status).where(Listing.tenant == tenant_id).tuples()
        found = {}
        for (status,) in rows:
            found[status] = found.get(status, 0) + 1
        return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listings", type=int, default=10_000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--maximum", type=float, default=100)
    parser.add_argument("--restore", type=float, default=50)
    parser.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args()

    with (
        temp_directory() as tmp,
        ShopifyFake(maximum=args.maximum, restore=args.restore, delay=args.delay) as fake,
    ):
        database_url = sqlite_url(os.path.join(tmp, "bench.db"))
        init_db(database_url)
        bind_database(database_url)
        tenant_id, warehouse, skus = setup(fake, args.listings)
        made = time.time()
        make_pending(tenant_id, warehouse, skus, 7)
        made = time.time() - made
        pending = counts(tenant_id)
        started = time.time()
        worker = subprocess.Popen(
            [sys.executable, "-m", "commerce_api.cli", "worker", "--concurrency", "1"],
            cwd=ROOT,
            env=child_env(database_url, ORDER_PULL_INTERVAL_SECONDS=3600),
            start_new_session=True,
        )
        try:
            drained = wait_for(
                lambda: counts(tenant_id).get("in_sync", 0) == len(skus),
                args.timeout,
                interval=0.25,
            )
            elapsed = time.time() - started
        finally:
            stop_process(worker)
        right = sum(1 for sku in skus if fake.quantity(sku) == 7)
        calls = dict(sorted(fake.calls.items()))
        points = sum(cost for _, cost, _ in fake.costs)

    print(
        f"shopify drain bench: sqlite, one worker process, the fake answering in "
        f"{args.delay * 1000:.0f} ms with a bucket of {args.maximum:g} points restoring "
        f"{args.restore:g}/s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(
        f"made pending (before the worker starts): {args.listings} listings in {made:.1f} s "
        f"(statuses then: {pending})"
    )
    print(
        f"drain    {len(skus)} pending listings, timed from the worker's start: {elapsed:.1f} s, "
        f"{len(skus) / elapsed:.0f} listings/s, {'drained' if drained else 'NOT drained'}; "
        f"{right} of {len(skus)} at the wanted quantity in Shopify"
    )
    print(
        f"shopify  throttled: {fake.throttled}, documents refused by the schema: "
        f"{fake.refused_count()}, bad answers of the fake: {len(fake.answer_problems)}; "
        f"points spent: {points}; calls: {calls}"
    )
    ok = (
        drained
        and elapsed <= BAR_DRAIN_SECONDS
        and right == len(skus)
        and fake.throttled == 0
        and fake.refused_count() == 0
    )
    print(
        f"bars: drained within {BAR_DRAIN_SECONDS} s, every quantity right, 0 throttled, "
        f"0 refused: {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
