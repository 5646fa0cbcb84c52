"""Every console page's render time (DESIGN 15: within 150 ms p95 on SQLite with 10,000
products, 50,000 orders and 200,000 adjustments).

Seeds a fresh SQLite database (``commerce-api init-db``, then rows straight into the
tables; also ``--transfers`` transfers of 1-5 lines between two warehouses, 2 % of the
listings refused and 5 % pending, 100 bundles of 2-3 components, and a webhook endpoint
with ``--deliveries`` deliveries of 3 attempts, each keeping a 4 KiB answer), serves it
with gunicorn on 127.0.0.1 (2 sync workers, rate limiting on, as ``make run`` has it; the
key's own limits high enough for the run), signs in through the sign-in form like a
browser, and times ``--requests`` sequential GETs of each page after a few warm-ups: the
time a person waits, one page at a time. Prints a table and the load average; exits 1
when a page's p95 is over ``--budget-ms``.

    .venv/bin/python bench/console.py [--products 10000] [--orders 50000]
        [--adjustments 200000] [--transfers 5000] [--deliveries 20000] [--requests 40]
        [--budget-ms 150]
"""

import argparse
import os
import random
import re
import sys
import time

import common
import requests

DAY_MS = 86_400_000


def seed(tenant_id, products, orders, adjustments, rng):
    """Products with listings, one warehouse with a stock row and a ledger per product,
    orders with one line and an address each. Returns (skus, an order id, a pending id)."""
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.inventory.models import Adjustment, InventorySummary, Stock, Warehouse
    from commerce_api.orders.models import Order, OrderLine
    from commerce_api.products.models import Product
    from commerce_api.timeutil import now_ms

    skus = common.seed_products(tenant_id, products, listings=True)
    now = now_ms()
    with db.connection_context():
        ids = dict(
            Product.select(Product.sku, Product.id).where(Product.tenant == tenant_id).tuples()
        )
        warehouse = new_id("warehouse")
        per_row = max(1, adjustments // len(skus))
        stock_rows, summaries, ledger = [], [], []
        for sku in skus:
            stock_id = new_id("stock")
            level = 0
            for sequence in range(1, per_row + 1):
                delta = rng.randint(1, 20) if level < 20 or rng.random() < 0.5 else -5
                ledger.append(
                    {
                        "id": new_id("adjustment"),
                        "tenant": tenant_id,
                        "product": ids[sku],
                        "sku": sku,
                        "warehouse": warehouse,
                        "stock": stock_id,
                        "sequence": sequence,
                        "quantity_type": "on_hand",
                        "before_quantity": level,
                        "after_quantity": level + delta,
                        "delta": delta,
                        "reason": "cycle_count" if delta > 0 else "damage",
                        "created_by": "bench",
                        "created_at": now - (per_row - sequence) * DAY_MS,
                    }
                )
                level += delta
            stock_rows.append(
                {
                    "id": stock_id,
                    "tenant": tenant_id,
                    "product": ids[sku],
                    "sku": sku,
                    "warehouse": warehouse,
                    "on_hand": level,
                    "version": per_row,
                    "last_adjusted_at": now,
                }
            )
            summaries.append(
                {
                    "product": ids[sku],
                    "tenant": tenant_id,
                    "sku": sku,
                    "total_on_hand": level,
                    "total_available": level,
                    "status": "normal" if level > 10 else "low",
                }
            )
        order_rows, lines = [], []
        for n in range(orders):
            order_id = f"ord_C{n:025d}"
            sku = rng.choice(skus)
            quantity = rng.randint(1, 3)
            order_rows.append(
                {
                    "id": order_id,
                    "tenant": tenant_id,
                    "marketplace": rng.choice(("amazon", "ebay")),
                    "external_order_id": f"C-{n:07d}",
                    "status": rng.choice(("pending",) + ("delivered",) * 9),
                    "fulfillment_method": "FBM",
                    "total_amount": "19.98",
                    "currency": "USD",
                    "placed_at": now - rng.randint(0, 365) * DAY_MS,
                    "shipping_address": {
                        "name": f"Customer {n}",
                        "line1": f"{n} High Street",
                        "city": "Leeds",
                        "postal_code": "LS1 1AA",
                        "country": "GB",
                    },
                    "reserved": {},
                    "source": "import",
                }
            )
            lines.append(
                {
                    "id": f"oln_C{n:022d}",
                    "order": order_id,
                    "tenant": tenant_id,
                    "position": 1,
                    "external_line_item_id": "1",
                    "sku": sku,
                    "title": sku,
                    "quantity": quantity,
                    "unit_price": "9.99",
                    "line_total": f"{9.99 * quantity:.2f}",
                    "shipped_quantity": 0,
                }
            )
        with db.atomic():
            Warehouse.create(id=warehouse, tenant=tenant_id, name="Main warehouse")
            common._insert_many(db, Stock, stock_rows)
            common._insert_many(db, InventorySummary, summaries)
            common._insert_many(db, Adjustment, ledger)
            common._insert_many(db, Order, order_rows)
            common._insert_many(db, OrderLine, lines)
        pending = next(row["id"] for row in order_rows if row["status"] == "pending")
    return skus, order_rows[0]["id"], pending, len(ledger), warehouse


def seed_stock_work(tenant_id, skus, warehouse, transfers, rng):
    """A second warehouse and ``transfers`` transfers between the two (every status), some
    listings refused or pending, bundles. Returns (a transfer id in transit, a bundle SKU)."""
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.inventory.models import Warehouse
    from commerce_api.products.models import BundleComponent, Listing, Product
    from commerce_api.timeutil import now_ms
    from commerce_api.transfers.models import Transfer, TransferLine

    now = now_ms()
    with db.connection_context():
        ids = dict(
            Product.select(Product.sku, Product.id).where(Product.tenant == tenant_id).tuples()
        )
        spare = new_id("warehouse")
        rows, lines = [], []
        statuses = ("draft", "in_transit", "received", "received", "cancelled")
        for n in range(transfers):
            transfer_id = new_id("transfer")
            status = rng.choice(statuses)
            created = now - rng.randint(0, 180) * DAY_MS - n
            rows.append(
                {
                    "id": transfer_id,
                    "tenant": tenant_id,
                    "from_warehouse": warehouse,
                    "to_warehouse": spare,
                    "status": status,
                    "reference": f"PO-{n:05d}",
                    "created_by": "bench",
                    "created_at": created,
                    "updated_at": created,
                    "shipped_at": created if status != "draft" else None,
                    "received_at": created if status == "received" else None,
                    "cancelled_at": created if status == "cancelled" else None,
                }
            )
            for position, sku in enumerate(rng.sample(skus, rng.randint(1, 5)), start=1):
                quantity = rng.randint(1, 20)
                lines.append(
                    {
                        "id": new_id("transfer_line"),
                        "transfer": transfer_id,
                        "tenant": tenant_id,
                        "product": ids[sku],
                        "sku": sku,
                        "position": position,
                        "quantity": quantity,
                        "received_quantity": quantity if status == "received" else 0,
                        "returned_quantity": 0,
                    }
                )
        in_transit = next(r["id"] for r in rows if r["status"] == "in_transit")
        bundles = skus[-100:]
        parts = skus[:-100]
        components = []
        for sku in bundles:
            for part in rng.sample(parts, rng.randint(2, 3)):
                components.append(
                    {
                        "tenant": tenant_id,
                        "bundle": ids[sku],
                        "component": ids[part],
                        "sku": part,
                        "quantity": rng.randint(1, 4),
                        "created_at": now,
                    }
                )
        with db.atomic():
            Warehouse.create(id=spare, tenant=tenant_id, name="Spare warehouse")
            common._insert_many(db, Transfer, rows)
            common._insert_many(db, TransferLine, lines)
            common._insert_many(db, BundleComponent, components)
            listed = [row[0] for row in Listing.select(Listing.id).tuples()]
            refused = rng.sample(listed, len(listed) // 50)
            waiting = rng.sample(sorted(set(listed) - set(refused)), len(listed) // 20)
            for chunk in range(0, len(refused), 500):
                Listing.update(
                    sync_status="error", last_sync_error="The marketplace refused the GTIN."
                ).where(Listing.id.in_(refused[chunk : chunk + 500])).execute()
            for chunk in range(0, len(waiting), 500):
                Listing.update(sync_status="pending", next_push_at=now).where(
                    Listing.id.in_(waiting[chunk : chunk + 500])
                ).execute()
    return in_transit, bundles[0]


def seed_deliveries(tenant_id, webhook_id, deliveries, rng):
    """``deliveries`` finished deliveries of one endpoint, 3 attempts each with a 4 KiB
    answer kept. Returns a delivery id."""
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.timeutil import now_ms
    from commerce_api.webhooks.models import WebhookAttempt, WebhookDelivery

    now = now_ms()
    answer = ('{"error": "busy", "detail": "' + "x" * 4000 + '"}')[:4096]
    rows, attempts = [], []
    for n in range(deliveries):
        delivery_id = new_id("delivery")
        created = now - n * 1000
        rows.append(
            {
                "id": delivery_id,
                "tenant_id": tenant_id,
                "endpoint_id": webhook_id,
                "event_id": new_id("event"),
                "event_type": "order.created",
                "event_seq": n,
                "status": "succeeded",
                "attempt_count": 3,
                "last_status_code": 200,
                "last_duration_ms": 40,
                "created_at": created,
                "delivered_at": created + 10_000,
                "finished_at": created + 10_000,
            }
        )
        for k, status in enumerate((503, 503, 200)):
            attempts.append(
                {
                    "delivery_id": delivery_id,
                    "attempted_at": created + k * 5000,
                    "status_code": status,
                    "duration_ms": rng.randint(20, 200),
                    "error": None if status == 200 else f"The endpoint answered HTTP {status}.",
                    "response_body": answer if status != 200 else '{"ok": true}',
                    "response_body_size": 4096 if status != 200 else 12,
                    "response_body_binary": False,
                }
            )
    with db.connection_context(), db.atomic():
        common._insert_many(db, WebhookDelivery, rows)
        common._insert_many(db, WebhookAttempt, attempts)
    return rows[len(rows) // 2]["id"]


def sign_in(base, secret):
    session = requests.Session()
    page = session.get(base + "/console/sign-in", timeout=10)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    answer = session.post(
        base + "/console/sign-in",
        data={"api_key": secret, "csrf_token": token},
        allow_redirects=False,
        timeout=10,
    )
    assert answer.status_code == 303, answer.text[:500]
    return session


def time_page(session, url, count, warmups=3):
    for _ in range(warmups):
        session.get(url, timeout=30)
    times, statuses = [], set()
    for _ in range(count):
        started = time.perf_counter()
        answer = session.get(url, timeout=30, allow_redirects=False)
        times.append((time.perf_counter() - started) * 1000)
        statuses.add(answer.status_code)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * len(times))) - 1)]
    return times[len(times) // 2], p95, times[-1], statuses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--products", type=int, default=10_000)
    parser.add_argument("--orders", type=int, default=50_000)
    parser.add_argument("--adjustments", type=int, default=200_000)
    parser.add_argument("--transfers", type=int, default=5_000)
    parser.add_argument("--deliveries", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--budget-ms", type=float, default=150.0)
    args = parser.parse_args()
    rng = random.Random(36)
    with common.temp_directory() as directory:
        url = common.sqlite_url(f"{directory}/bench.db")
        common.init_db(url)
        common.bind_database(url)
        tenant_id, secret = common.create_tenant_and_key("enterprise", rate_limit=10_000_000)
        started = time.monotonic()
        skus, order_id, pending_id, adjustments, warehouse = seed(
            tenant_id, args.products, args.orders, args.adjustments, rng
        )
        transfer_id, bundle = seed_stock_work(tenant_id, skus, warehouse, args.transfers, rng)
        print(
            f"seeded {len(skus):,} products, {args.orders:,} orders, {adjustments:,}"
            f" adjustments, {args.transfers:,} transfers in {time.monotonic() - started:.1f} s"
        )
        env = common.child_env(url, SECRET_KEY="bench-console", WEBHOOK_ALLOW_PRIVATE_TARGETS="1")
        with common.gunicorn("wsgi:app", env) as base:
            session = sign_in(base, secret)
            hook = requests.post(
                base + "/api/webhooks",
                json={"url": "http://127.0.0.1:9/hook", "events": ["order.created"]},
                headers={"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant_id},
                timeout=10,
            )
            assert hook.status_code == 201, hook.text[:500]
            webhook_id = hook.json()["data"]["id"]
            delivery_id = seed_deliveries(tenant_id, webhook_id, args.deliveries, rng)
            print(f"seeded {args.deliveries:,} deliveries of 3 attempts with their answers")
            sku = skus[len(skus) // 2]
            hooks = f"/console/settings/notifications/{webhook_id}"
            pages = [
                ("Overview", "/console/"),
                ("Products", "/console/products"),
                ("Products, search", "/console/products?search=mug"),
                ("Products, filtered", "/console/products?status=inactive&category=lamp"),
                ("Product detail", f"/console/products/{sku}"),
                ("Inventory", "/console/inventory"),
                ("Inventory, low", "/console/inventory?status=low"),
                ("Stock and ledger", f"/console/inventory/{sku}"),
                ("Listings, refused", "/console/listings?sync_status=error"),
                ("Transfers", "/console/inventory/transfers"),
                ("Transfers, in transit", "/console/inventory/transfers?status=in_transit"),
                ("Transfers, by SKU", f"/console/inventory/transfers?sku={sku}"),
                ("Transfer detail", f"/console/inventory/transfers/{transfer_id}"),
                ("Bundle detail", f"/console/products/{bundle}"),
                ("Bundle stock", f"/console/inventory/{bundle}"),
                ("Imports", "/console/inventory/imports"),
                ("Orders", "/console/orders"),
                ("Orders, pending", "/console/orders?status=pending"),
                ("Orders, by SKU", f"/console/orders?sku={sku}"),
                ("Order detail", f"/console/orders/{pending_id}"),
                ("Pricing", "/console/pricing"),
                ("Jobs", "/console/jobs"),
                ("API keys", "/console/settings/api-keys"),
                ("Notifications", "/console/settings/notifications"),
                ("Delivery log", hooks),
                ("Delivery with answers", f"{hooks}/deliveries/{delivery_id}"),
                ("Marketplaces", "/console/settings/marketplaces"),
            ]
            print()
            print(f"| page | p50 ms | p95 ms | max ms | status | p95 <= {args.budget_ms:g} ms |")
            print("|---|---:|---:|---:|---|---|")
            over = []
            for name, path in pages:
                p50, p95, worst, statuses = time_page(session, base + path, args.requests)
                ok = p95 <= args.budget_ms and statuses == {200}
                if not ok:
                    over.append(name)
                status = ",".join(map(str, sorted(statuses)))
                mark = "yes" if ok else "NO"
                print(f"| {name} | {p50:.1f} | {p95:.1f} | {worst:.1f} | {status} | {mark} |")
    print()
    print("load average (1, 5, 15 min): " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("all pages within budget" if not over else f"over budget: {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
