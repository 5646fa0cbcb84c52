"""Marketplace notifications benchmark (issue 33): ``.venv/bin/python bench/notifications.py``.

Real processes on 127.0.0.1: gunicorn (2 workers) and one ``commerce-api worker``. A
tenant sells 20 SKUs (100 units each) on a sandbox shop that notifies, and lists them on a
second channel, an ``http`` marketplace adapter (tests/support/listing_marketplace.py)
answering in ``--delay`` (50 ms). ``--orders`` (100) orders are placed in the sandbox one
after another, each followed at once by its signed ``orders/create`` notification
(tests/support/notifications.py). Measured per order, from the moment the notification is
sent:

  answer     the notification's answer time (bar: p99 < 1 s)
  visible    until the order is in ``GET /api/orders`` (bar: p99 <= 2 s)
  follow     until the other channel received the SKU's new quantity (the listing
             dropped by the order; DESIGN 13: within 2 s more)

``--connector shopify``: the notifying shop is the Shopify contract fake
(tests/support/shopify_fake.py) instead of the sandbox: each order is created in the fake
and the fake signs and sends its ``orders/create`` webhook; the worker pulls that order
through the fake's Admin GraphQL endpoint. The fake's refused documents and throttled
requests are reported (bar: 0 each).

The cursor pull is off (``ORDER_PULL_INTERVAL_SECONDS`` one hour): every order arrives by
its notification. SQLite (a temporary file) by default; ``--database-url`` for PostgreSQL
(a database of its own, emptied by ``init-db`` expectations: give a fresh one). Exit
status 1 when a bar fails.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import requests  # noqa: E402
from common import (  # noqa: E402
    ROOT,
    bind_database,
    child_env,
    create_tenant_and_key,
    gunicorn,
    init_db,
    sqlite_url,
    stop_process,
    temp_directory,
)

sys.path.insert(0, ROOT)

from tests.support.listing_marketplace import ListingMarketplace  # noqa: E402
from tests.support.notifications import (  # noqa: E402
    connect_notified,
    notification_path,
    place_order,
    signed,
)
from tests.support.waiting import wait_for  # noqa: E402

BAR_ANSWER_P99 = 1.0
BAR_VISIBLE_P99 = 2.0
BAR_FOLLOW_P99 = 2.0  # after the order is visible
SKUS = [f"NTF-{n:02d}" for n in range(20)]
STOCK = 100
CONFIG = {
    "ORDER_PULL_INTERVAL_SECONDS": 3600,
    "ORDER_NOTIFIED_POLL_INTERVAL": 0.05,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.05,
    "WORKER_POLL_INTERVAL": 0.1,
    "RATE_LIMIT_ENABLED": 0,  # the bench polls GET /api/orders every 10 ms
}


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def seed(base, key, tenant_id, marketplace, fake=None):
    from commerce_api.db import db
    from commerce_api.inventory.services import create_warehouse
    from commerce_api.marketplaces.services import connect_marketplace

    auth = {"Authorization": f"Bearer {key}", "X-Tenant-ID": tenant_id}
    with db.connection_context():
        warehouse = create_warehouse(tenant_id, {"name": "Main", "type": "own"})["id"]
        connect_marketplace(
            tenant_id, "mirakl", "http", base_url=marketplace.url, allow_private=True
        )
        if fake is None:
            shop = connect_notified(tenant_id)
        else:
            shop = connect_marketplace(
                tenant_id,
                "shopify",
                "shopify",
                settings=fake.settings(warehouse),
                credentials=fake.credentials(),
                allow_private=True,
            )
    for sku in SKUS:
        product = {"sku": sku, "title": f"Bench {sku}", "gtin": "4006381333931", "status": "active"}
        response = requests.post(f"{base}/api/products", json=product, headers=auth, timeout=10)
        assert response.status_code == 201, response.text
        response = requests.put(
            f"{base}/api/inventory/{sku}",
            json={"warehouse_id": warehouse, "quantity": STOCK, "reason": "cycle_count"},
            headers=auth,
            timeout=10,
        )
        assert response.status_code == 200, response.text
        for channel in ("mirakl", "shopify") if fake is not None else ("mirakl",):
            response = requests.patch(
                f"{base}/api/products/{sku}/listings/{channel}",
                json={"price": 12.5},
                headers=auth,
                timeout=10,
            )
            assert response.status_code == 200, response.text
    return shop.id, auth


def visible(base, auth, external_id):
    response = requests.get(
        f"{base}/api/orders",
        params={"external_order_id": external_id},
        headers=auth,
        timeout=10,
    )
    return response.status_code == 200 and bool(response.json()["data"])


class Sandbox:
    """The sandbox shop: places an order and sends its signed notification."""

    fake = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def place_and_notify(self, session, base, shop_id, sku):
        from commerce_api.db import db

        with db.connection_context():
            order = place_order(shop_id, [{"sku": sku, "quantity": 1}])
        external_id = order["external_order_id"]
        headers, body = signed(external_id)
        sent = time.monotonic()
        response = session.post(
            base + notification_path(shop_id), data=body, headers=headers, timeout=10
        )
        return external_id, sent, response


class Shopify:
    """The Shopify contract fake: the order is created in the shop, which signs and sends
    its ``orders/create`` webhook."""

    def __enter__(self):
        from tests.support.shopify_fake import ShopifyFake

        self.fake = ShopifyFake().__enter__()
        for sku in SKUS:
            self.fake.add_variant(sku, price="12.50", quantity=0)
        return self

    def __exit__(self, *exc):
        return self.fake.__exit__(*exc)

    def place_and_notify(self, session, base, shop_id, sku):
        gid = self.fake.add_order([(sku, 1, "12.50")])
        headers, body = self.fake.notification(gid)
        sent = time.monotonic()
        response = session.post(
            base + notification_path(shop_id), data=body, headers=headers, timeout=10
        )
        return gid, sent, response


def run(args, database_url):
    init_db(database_url)
    bind_database(database_url)
    tenant_id, key = create_tenant_and_key()
    env = child_env(database_url, **CONFIG)
    import subprocess

    shop_kind = Shopify() if args.connector == "shopify" else Sandbox()
    with ListingMarketplace(delay=args.delay) as marketplace, shop_kind as shop:
        worker = subprocess.Popen(
            [sys.executable, "-m", "commerce_api.cli", "worker"],
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        try:
            with gunicorn("wsgi:app", env, workers=2) as base:
                shop_id, auth = seed(base, key, tenant_id, marketplace, shop.fake)
                assert wait_for(
                    lambda: all(marketplace.last_quantity(s) == STOCK for s in SKUS), timeout=60
                ), "the listings were not pushed"
                if shop.fake is not None:
                    assert wait_for(
                        lambda: all(shop.fake.quantity(s) == STOCK for s in SKUS), timeout=60
                    ), "the Shopify listings were not pushed"
                answers, visibles, follows = [], [], []
                left = dict.fromkeys(SKUS, STOCK)
                session = requests.Session()
                for n in range(args.orders):
                    sku = SKUS[n % len(SKUS)]
                    left[sku] -= 1
                    external_id, sent, response = shop.place_and_notify(session, base, shop_id, sku)
                    answers.append(time.monotonic() - sent)
                    assert response.status_code == 200, response.text
                    while not visible(base, auth, external_id):
                        if time.monotonic() - sent > 30:
                            raise SystemExit(f"order {external_id} not visible within 30 s")
                        time.sleep(0.01)
                    seen = time.monotonic()
                    visibles.append(seen - sent)
                    while marketplace.last_quantity(sku) != left[sku]:
                        if time.monotonic() - sent > 30:
                            raise SystemExit(f"{sku} not pushed within 30 s")
                        time.sleep(0.01)
                    follows.append(time.monotonic() - seen)
                if shop.fake is not None:
                    # the shop's own listings follow too (pushed through the cost bucket)
                    wait_for(
                        lambda: all(shop.fake.quantity(s) == left[s] for s in SKUS), timeout=30
                    )
                    counts = {
                        "refused": shop.fake.refused_count(),
                        "throttled": shop.fake.throttled,
                        "shop_behind": sum(shop.fake.quantity(s) != left[s] for s in SKUS),
                    }
                else:
                    counts = {}
        finally:
            stop_process(worker)
    return answers, visibles, follows, counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--database-url", default=None)
    parser.add_argument(
        "--connector",
        choices=("sandbox", "shopify"),
        default="sandbox",
        help="the notifying shop: the sandbox, or the Shopify contract fake",
    )
    args = parser.parse_args()
    with temp_directory() as folder:
        database_url = args.database_url or sqlite_url(os.path.join(folder, "bench.db"))
        engine = "postgresql" if database_url.startswith("postgres") else "sqlite"
        answers, visibles, follows, counts = run(args, database_url)
    failed = False
    print(
        f"notifications: {args.orders} orders, one after another, {engine}, {args.connector} shop"
    )
    for name, values, bar in (
        ("answer", answers, BAR_ANSWER_P99),
        ("visible in the API", visibles, BAR_VISIBLE_P99),
        ("other channel followed (after visible)", follows, BAR_FOLLOW_P99),
    ):
        p50, p99 = percentile(values, 50), percentile(values, 99)
        ok = p99 <= bar
        failed |= not ok
        print(
            f"  {name:40s} p50 {p50 * 1000:7.1f} ms  p99 {p99 * 1000:7.1f} ms"
            f"  max {max(values) * 1000:7.1f} ms  bar p99 <= {bar:.1f} s: {'ok' if ok else 'FAIL'}"
        )
    for name, value in counts.items():
        ok = value == 0
        failed |= not ok
        print(f"  {name:40s} {value:5d}  bar 0: {'ok' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
