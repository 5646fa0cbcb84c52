"""Listing sync benchmark (issue 19): ``.venv/bin/python bench/listing_sync.py``.

A real ``commerce-api worker`` process pushes listings to a marketplace adapter on
127.0.0.1 (tests/support/listing_marketplace.py, keep-alive) that answers every request in
``--delay`` seconds (50 ms). Stock is changed in this process through the inventory
service, as the API does. Three cases:

  latency    ``--changes`` stock changes, one every 100 ms, spread over 50 listed SKUs:
             from the change's commit to the marketplace receiving that quantity (p50, p99)
  burst      1,000 stock changes to one SKU within 10 s (evenly paced): pushes of its
             listing, and whether the marketplace's last quantity is the final available
  drain      ``--drain`` pending listings of one tenant on one connection: listings
             pushed per second until all are in sync; meanwhile another tenant's stock
             change: its latency (the big tenant must not hold it back)

``--connector amazon`` runs the same cases against the SP-API contract fake
(tests/support/amazon_fake.py, answering in ``--delay``, enforcing the usage plans): a few
due listings go as ``patchListingsItem`` calls, many as one ``JSON_LISTINGS_FEED``; a
listing counts as drained once Amazon confirmed it (``in_sync``). Amazon allows 5 patches a
second, so the latency case paces its changes at one per 250 ms there; the fake's refused
and throttled (429) counts are printed and must be 0.

Bars (DESIGN 9, 13): latency p99 <= 2 s; <= 20 pushes per 1,000 changes to one SKU, last
quantity right; amazon: 10,000 drained within 60 s, nothing refused, no 429. The drain
rate is reported (it is bounded by the connection's concurrency,
the tenant's cap of calls in flight (``MARKETPLACE_TENANT_CONCURRENCY``, 2 by default;
``--tenant-cap``) and the marketplace's answer time: 2 in flight at 50 ms is at most 40/s,
4 at most 80/s). Exit status 1 when a bar fails. SQLite (a temporary file).

  bundles    ``--bundles`` (200) bundle products listed on the marketplace, all made of one
             component (1, 2 or 3 per bundle; DESIGN 14): ``--bundle-changes`` changes of
             the component's stock, each timed from its commit to every bundle listing
             receiving its new quantity (p50, p99 over all listings and changes)

``--only CASE`` runs one case. Bars (DESIGN 9, 14): latency and bundles p99 <= 2 s;
<= 20 pushes per 1,000 changes to one SKU, last quantity right.

The http connections use the documented batch endpoint (``settings.batch_size``,
``POST /products/batch``; ``--batch-size``, 100 by default, as docs/connector-http.md
suggests): the push service then sends up to that many due listings of a connection in one
request, and a single due listing as its own ``PUT``. ``--batch-size 1`` is a connection
without it, every listing its own ``PUT``: the bundles case is then bound by throughput
(200 pushes at 50 ms with 2 in flight, the default tenant cap, take 5 s at the least;
``--tenant-cap`` and ``--connection-concurrency`` raise it). The drain rate is
reported (it is bounded by the connection's concurrency, the tenant's cap of calls in
flight (``MARKETPLACE_TENANT_CONCURRENCY``, 2 by default; ``--tenant-cap``), the
marketplace's answer time and the batch size: 2 single pushes in flight at 50 ms are at
most 40/s, 4 at most 80/s; batches carry up to ``--batch-size`` listings each). Exit
status 1 when a bar fails. SQLite (a temporary file). The load average printed is the
machine's over the last minute when the run ends (``/proc/loadavg``).
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

from tests.support.amazon_fake import AmazonFake  # noqa: E402
from tests.support.listing_marketplace import ListingMarketplace  # noqa: E402
from tests.support.waiting import wait_for  # noqa: E402

BAR_P99_SECONDS = 2.0
BAR_BURST_PUSHES = 20
BAR_AMAZON_DRAIN_SECONDS = 60
MARKETPLACE = "mirakl"
BATCH_SIZE = 1  # the http connections' settings.batch_size (--batch-size)


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def setup_tenant(name, marketplace, skus, stock):
    """A tenant with ``skus`` listed on ``MARKETPLACE`` (in sync) and ``stock`` of each."""
    from commerce_api.auth.services import create_tenant
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.inventory.services import create_warehouse
    from commerce_api.marketplaces.services import connect_marketplace
    from commerce_api.products.models import Listing, Product

    with db.connection_context():
        tenant = create_tenant(name, "enterprise")
        if isinstance(marketplace, AmazonFake):
            for sku in skus:
                marketplace.add_listing(sku)
            connect_marketplace(
                tenant.id,
                MARKETPLACE,
                "amazon",
                settings=marketplace.settings(),
                credentials=marketplace.credentials(),
                allow_private=True,
            )
        else:
            connect_marketplace(
                tenant.id,
                MARKETPLACE,
                "http",
                base_url=marketplace.url,
                settings={"batch_size": BATCH_SIZE} if BATCH_SIZE > 1 else None,
                allow_private=True,
            )
        now = int(time.time() * 1000)
        products, listings = [], []
        for sku in skus:
            product_id = new_id("product")
            products.append(
                {
                    "id": product_id,
                    "tenant": tenant.id,
                    "sku": sku,
                    "title": f"Bench {sku}",
                    "status": "active",
                    "images": [],
                    "created_at": now,
                    "updated_at": now,
                }
            )
            listings.append(
                {
                    "id": new_id("listing"),
                    "tenant": tenant.id,
                    "product": product_id,
                    "marketplace": MARKETPLACE,
                    "external_id": f"EXT-{sku}",
                    "price": "19.99",
                    "currency": "USD",
                    "quantity": 0,
                    "last_synced_at": now,
                    "created_at": now,
                    "updated_at": now,
                }
            )
        with db.atomic():
            _insert_many(db, Product, products)
            _insert_many(db, Listing, listings)
        warehouse = create_warehouse(tenant.id, {"name": "Main", "type": "own"})["id"]
    for sku in skus[:stock]:
        set_stock(tenant.id, warehouse, sku, 1)
    return tenant.id, warehouse


def set_stock(tenant_id, warehouse, sku, quantity):
    """Set the stock (the API's service); returns when its transaction committed."""
    from commerce_api.db import db
    from commerce_api.inventory.services import set_stock as set_level

    with db.connection_context():
        set_level(
            tenant_id,
            sku,
            {"warehouse_id": warehouse, "quantity": quantity, "reason": "cycle_count"},
            "bench",
        )
    return time.time()


def latency_case(args, marketplace, tenant_id, warehouse, skus):
    latencies, missed = [], 0
    for n in range(args.changes):
        sku = skus[n % len(skus)]
        quantity = 1000 + n
        committed = set_stock(tenant_id, warehouse, sku, quantity)

        def arrived(sku=sku, quantity=quantity):
            return any(
                p["body"].get("quantity") == quantity for p in marketplace.pushes_of(sku)[-3:]
            )

        if not wait_for(arrived, 10):
            missed += 1
            continue
        pushes = reversed(marketplace.pushes_of(sku))
        at = next(p["at"] for p in pushes if p["body"].get("quantity") == quantity)
        latencies.append(at - committed)
        time.sleep(max(0.0, args.pace - (time.time() - committed)))
    return {
        "changes": args.changes,
        "p50_ms": 1000 * percentile(latencies, 50),
        "p99_ms": 1000 * percentile(latencies, 99),
        "max_ms": 1000 * max(latencies, default=float("nan")),
        "missed": missed,
    }


def burst_case(marketplace, tenant_id, warehouse, sku):
    before = len(marketplace.pushes_of(sku))
    started = time.monotonic()
    for n in range(1, 1001):
        set_stock(tenant_id, warehouse, sku, n)
        time.sleep(max(0.0, started + n * 0.01 - time.monotonic()))  # 1,000 over 10 s
    burst = time.monotonic() - started
    settled = wait_for(lambda: marketplace.last_quantity(sku) == 1000, 15)
    time.sleep(1.0)  # a push after the last one would show now
    return {
        "changes": 1000,
        "seconds": burst,
        "pushes": len(marketplace.pushes_of(sku)) - before,
        "last_quantity": marketplace.last_quantity(sku),
        "right": settled and marketplace.last_quantity(sku) == 1000,
    }


def drain_case(args, marketplace, big_tenant, small):
    from commerce_api.db import db, write_transaction
    from commerce_api.products.desired_state import mark_listings_pending
    from commerce_api.products.models import Listing

    with db.connection_context(), write_transaction():
        ids = [row.id for row in Listing.select(Listing.id).where(Listing.tenant == big_tenant)]
        mark_listings_pending(listing_ids=ids)
    started = time.time()

    def pending():
        with db.connection_context():
            return (
                Listing.select()
                .where((Listing.tenant == big_tenant) & (Listing.sync_status != "in_sync"))
                .count()
            )

    time.sleep(1.0)
    small_tenant, small_warehouse, small_sku = small
    committed = set_stock(small_tenant, small_warehouse, small_sku, 77)
    wait_for(lambda: marketplace.last_quantity(small_sku) == 77, 30)
    small_pushes = marketplace.pushes_of(small_sku)
    other = small_pushes[-1]["at"] - committed if small_pushes else float("nan")
    done = wait_for(lambda: pending() == 0, args.timeout, interval=0.5)
    elapsed = time.time() - started
    return {
        "listings": len(ids),
        "seconds": elapsed,
        "per_second": len(ids) / elapsed if done else float("nan"),
        "drained": done,
        "other_tenant_ms": 1000 * other,
    }


def setup_bundles(marketplace, count):
    """A tenant with one component (stocked) and ``count`` bundles of it, listed and in
    sync; returns (tenant id, warehouse id, {bundle sku: component quantity})."""
    from commerce_api.db import db
    from commerce_api.products.models import BundleComponent, Product

    recipes = {f"SET-{n:04d}": 1 + n % 3 for n in range(count)}
    tenant_id, warehouse = setup_tenant("Bundles", marketplace, ["COMP-1", *recipes], 0)
    with db.connection_context():
        ids = dict(
            Product.select(Product.sku, Product.id).where(Product.tenant == tenant_id).tuples()
        )
        rows = [
            {
                "tenant": tenant_id,
                "bundle": ids[sku],
                "component": ids["COMP-1"],
                "sku": "COMP-1",
                "quantity": quantity,
                "created_at": int(time.time() * 1000),
            }
            for sku, quantity in recipes.items()
        ]
        with db.atomic():
            _insert_many(db, BundleComponent, rows)
    return tenant_id, warehouse, recipes


def bundles_case(args, marketplace, tenant_id, warehouse, recipes):
    latencies, missed = [], 0
    for k in range(args.bundle_changes):
        stock = 600 + 6 * (k + 1)  # every bundle's quantity changes each time
        committed = set_stock(tenant_id, warehouse, "COMP-1", stock)

        def arrived_all(stock=stock):
            return all(
                any(p["body"].get("quantity") == stock // q for p in marketplace.pushes_of(s)[-3:])
                for s, q in recipes.items()
            )

        if not wait_for(arrived_all, 30, interval=0.02):
            missed += 1
        for sku, quantity in recipes.items():
            at = next(
                (
                    p["at"]
                    for p in marketplace.pushes_of(sku)
                    if p["body"].get("quantity") == stock // quantity and p["at"] >= committed
                ),
                None,
            )
            if at is not None:
                latencies.append(at - committed)
        time.sleep(0.5)
    return {
        "bundles": len(recipes),
        "changes": args.bundle_changes,
        "samples": len(latencies),
        "p50_ms": 1000 * percentile(latencies, 50),
        "p99_ms": 1000 * percentile(latencies, 99),
        "max_ms": 1000 * max(latencies, default=float("nan")),
        "missed": missed,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--delay", type=float, default=0.05, help="marketplace answer time, s")
    parser.add_argument("--changes", type=int, default=200, help="latency case: stock changes")
    parser.add_argument("--drain", type=int, default=10_000, help="pending listings to drain")
    parser.add_argument("--timeout", type=float, default=900, help="drain case: seconds at most")
    parser.add_argument(
        "--tenant-cap", type=int, default=None, help="MARKETPLACE_TENANT_CONCURRENCY (default 2)"
    )
    parser.add_argument(
        "--connection-concurrency",
        type=int,
        default=None,
        help="MARKETPLACE_CONNECTION_CONCURRENCY (default 4)",
    )
    parser.add_argument("--bundles", type=int, default=200, help="bundles of one component")
    parser.add_argument("--bundle-changes", type=int, default=10, help="component changes")
    parser.add_argument(
        "--only", choices=("latency", "burst", "drain", "bundles"), help="run one case"
    )
    parser.add_argument("--connector", choices=("http", "amazon"), default="http")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=100,
        help="http: the connections' settings.batch_size (POST /products/batch); 1: single PUTs",
    )
    args = parser.parse_args()
    global MARKETPLACE, BATCH_SIZE
    BATCH_SIZE = args.batch_size
    amazon = args.connector == "amazon"
    if amazon:
        MARKETPLACE = "amazon_us"
    args.pace = 0.25 if amazon else 0.1  # Amazon's plan: 5 patches a second
    fake = AmazonFake(delay=args.delay, feed_seconds=0.5) if amazon else None
    marketplace_context = fake or ListingMarketplace(delay=args.delay)
    # the bundles case lists bundles on the http fake
    cases = {args.only} if args.only else {"latency", "burst", "drain", "bundles"}
    if amazon:
        cases.discard("bundles")
    if "drain" not in cases:
        args.drain = 0

    with temp_directory() as tmp, marketplace_context as marketplace:
        database_url = sqlite_url(os.path.join(tmp, "bench.db"))
        init_db(database_url)
        bind_database(database_url)
        skus = [f"LAT-{n:03d}" for n in range(50)]
        tenant_id, warehouse = setup_tenant("Latency", marketplace, skus, len(skus))
        small = setup_tenant("Small", marketplace, ["SMALL-1"], 1)
        big_skus = [f"BIG-{n:05d}" for n in range(args.drain)]
        big_tenant, _ = setup_tenant("Big", marketplace, big_skus, 0)
        bundled = setup_bundles(marketplace, args.bundles) if "bundles" in cases else None
        config = {}
        if args.tenant_cap:
            config["MARKETPLACE_TENANT_CONCURRENCY"] = args.tenant_cap
        if args.connection_concurrency:
            config["MARKETPLACE_CONNECTION_CONCURRENCY"] = args.connection_concurrency
        worker = subprocess.Popen(
            [sys.executable, "-m", "commerce_api.cli", "worker", "--concurrency", "1"],
            cwd=ROOT,
            env=child_env(database_url, ORDER_PULL_INTERVAL_SECONDS=3600, **config),
            start_new_session=True,
        )
        try:
            wait_for(lambda: marketplace.last_quantity(skus[-1]) == 1, 30)  # caught up
            latency = burst = drain = bundles = None
            if "latency" in cases:
                latency = latency_case(args, marketplace, tenant_id, warehouse, skus)
            if "burst" in cases:
                burst = burst_case(marketplace, tenant_id, warehouse, skus[0])
            if "drain" in cases:
                drain = drain_case(args, marketplace, big_tenant, (small[0], small[1], "SMALL-1"))
            if "bundles" in cases:
                bundles = bundles_case(args, marketplace, *bundled)
        finally:
            stop_process(worker)

    batches = f"batch_size {BATCH_SIZE}, " if not amazon else ""
    print(f"listing sync bench ({args.connector}, {batches}tenant cap "
          f"{args.tenant_cap or 2}, connection concurrency {args.connection_concurrency or 4}): "
          f"sqlite, one worker process, marketplace answering in "
          f"{args.delay * 1000:.0f} ms; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    ok = True
    if latency is not None:
        print(f"latency  {latency['changes']} changes: p50 {latency['p50_ms']:.0f} ms, "
              f"p99 {latency['p99_ms']:.0f} ms, max {latency['max_ms']:.0f} ms, "
              f"missed {latency['missed']}")  # fmt: skip
        ok &= latency["p99_ms"] <= BAR_P99_SECONDS * 1000 and latency["missed"] == 0
    if burst is not None:
        print(f"burst    1,000 changes to one SKU in {burst['seconds']:.1f} s: "
              f"{burst['pushes']} pushes, last quantity {burst['last_quantity']} "
              f"({'right' if burst['right'] else 'WRONG'})")  # fmt: skip
        ok &= burst["pushes"] <= BAR_BURST_PUSHES and burst["right"]
    if drain is not None:
        print(f"drain    {drain['listings']} pending listings: {drain['seconds']:.1f} s, "
              f"{drain['per_second']:.0f} listings/s; another tenant's change meanwhile "
              f"reached the marketplace in {drain['other_tenant_ms']:.0f} ms")  # fmt: skip
        ok &= drain["drained"]
    if amazon:
        print(f"amazon   requests refused by the contract: {fake.refused_count()}, "
              f"429 from the usage plans: {fake.throttled}, bad answers of the fake: "
              f"{len(fake.answer_problems)}; calls: "
              f"{dict(sorted(fake.calls.items()))}")  # fmt: skip
        ok &= fake.refused_count() == 0 and fake.throttled == 0
        if drain is not None:
            ok &= drain["seconds"] <= BAR_AMAZON_DRAIN_SECONDS
    if bundles is not None:
        print(f"bundles  {bundles['changes']} changes of a component used by "
              f"{bundles['bundles']} listed bundles ({bundles['samples']} arrivals): p50 "
              f"{bundles['p50_ms']:.0f} ms, p99 {bundles['p99_ms']:.0f} ms, max "
              f"{bundles['max_ms']:.0f} ms, missed {bundles['missed']}")  # fmt: skip
        ok &= bundles["p99_ms"] <= BAR_P99_SECONDS * 1000 and bundles["missed"] == 0
    print(f"bars: p99 <= {BAR_P99_SECONDS:g} s, <= {BAR_BURST_PUSHES} pushes per 1,000 "
          f"changes, right last quantity, drained: {'PASS' if ok else 'FAIL'}")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
