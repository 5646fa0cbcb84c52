"""Repricing at scale (issue 10): ``python bench/pricing.py``.

Creates a temp SQLite database with ``commerce-api init-db`` and seeds one tenant with
10,000 active products listed on a sandbox marketplace, 3 fresh competitor offers per SKU
and 25 pricing rules (every type, all three scopes). Then it runs ``pricing_recalculate``
through the real job worker (one runner thread, in this process) twice: first for 2,000
of the SKUs, then for all 10,000. Per run it prints the SKUs, chunks, recommendations
written, the job's duration (started to completed, as GET /api/ai-jobs/:id shows it),
SKUs/s, and the SQL statements the job's runner thread sent to SQLite (every
``execute``/``executemany`` call on a cursor: the claim, the job and its completion;
an ``executemany`` is one statement however many rows it carries).

Bar: the 10,000-SKU job takes 20 s or less, and its statements grow with chunks, not
SKUs (the statements per chunk of both runs differ by at most a few). Exit status 1 when
the bar fails. ``--apply`` runs the 10,000-SKU job with ``apply: true`` as well (every
price pushed through the sandbox connector, one push per SKU, statements still per chunk).
"""

import argparse
import os
import random
import sys
import threading
import time
from decimal import ROUND_HALF_UP, Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# no order pulls competing for the database while the job runs
os.environ.setdefault("COMMERCE_ORDER_PULL_INTERVAL_SECONDS", "86400")

import common  # noqa: E402

SKUS = 10_000
SMALL = 2_000
OFFERS = 3
BAR_SECONDS = 20.0
MARKETPLACE = "amazon"
CATEGORIES = ("kitchen", "home", "garden", "office", "outdoor")
CENT = Decimal("0.01")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skus", type=int, default=SKUS, help="SKUs seeded (10000)")
    parser.add_argument("--small", type=int, default=SMALL, help="SKUs of the first run (2000)")
    parser.add_argument("--apply", action="store_true", help="also run with apply: true")
    return parser.parse_args(argv)


class StatementCounter:
    """Counts cursor ``execute``/``executemany`` calls made by job-runner threads."""

    def __init__(self, database):
        self.count = 0
        self._lock = threading.Lock()
        original = database.cursor
        counter = self

        class Cursor:
            def __init__(self, inner):
                self._inner = inner

            def __getattr__(self, name):
                return getattr(self._inner, name)

            def __iter__(self):
                return iter(self._inner)

            def execute(self, *args, **kwargs):
                counter._count()
                return self._inner.execute(*args, **kwargs)

            def executemany(self, *args, **kwargs):
                counter._count()
                return self._inner.executemany(*args, **kwargs)

        database.cursor = lambda *args, **kwargs: Cursor(original(*args, **kwargs))

    def _count(self):
        if threading.current_thread().name.startswith("job-runner"):
            with self._lock:
                self.count += 1

    def take(self):
        with self._lock:
            count, self.count = self.count, 0
        return count


def money(value):
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def seed(tenant_id, count, rng):
    """Products, listings on the sandbox marketplace, 3 fresh offers each; returns skus."""
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.marketplaces.services import connect_marketplace
    from commerce_api.pricing.competitors import store_offers
    from commerce_api.products.models import Listing, Product
    from commerce_api.timeutil import now_ms

    connect_marketplace(
        tenant_id,
        MARKETPLACE,
        "sandbox",
        created_by="bench",
        settings={"initial_orders": 0, "orders_per_pull": 0},
    )
    now = now_ms()
    products, listings, offers, skus = [], [], [], []
    for i in range(count):
        sku = f"SKU-{i:06d}"
        skus.append(sku)
        cost = money(Decimal(rng.randrange(200, 5_000)) / 100)
        price = money(cost * Decimal(str(rng.uniform(1.6, 2.4))))
        product_id = new_id("product")
        products.append(
            {
                "id": product_id,
                "tenant": tenant_id,
                "sku": sku,
                "title": f"Benchmark product {i}",
                "description": None,
                "status": "active",
                "gtin": "4006381333931",  # the sandbox lists products with a GTIN only
                "category": CATEGORIES[i % len(CATEGORIES)],
                "cost_price": cost,
                "weight_kg": None,
                "images": [],
                "created_at": now,
                "updated_at": now,
            }
        )
        listings.append(
            {
                "id": new_id("listing"),
                "tenant": tenant_id,
                "product": product_id,
                "marketplace": MARKETPLACE,
                "external_id": f"SBX-{i}",
                "price": price,
                "currency": "USD",
                "quantity": rng.randrange(0, 100),
                "status": "active",
                "last_synced_at": now,
                "created_at": now,
                "updated_at": now,
            }
        )
        landed = []
        for n in range(OFFERS):
            offer_price = money(price * Decimal(str(rng.uniform(0.85, 1.15))))
            shipping = Decimal(rng.choice(("0.00", "2.99", "4.99")))
            landed.append(offer_price + shipping)
            offers.append(
                {
                    "sku": sku,
                    "marketplace": MARKETPLACE,
                    "competitor": f"Competitor {n + 1}",
                    "price": offer_price,
                    "shipping": shipping,
                    "landed_price": offer_price + shipping,
                    "currency": "USD",
                    "is_buy_box_winner": False,
                    "condition": "new",
                    "observed_at": now - rng.randrange(0, 3_600_000),
                }
            )
        offers[-OFFERS + landed.index(min(landed))]["is_buy_box_winner"] = True
    with db.atomic():
        common._insert_many(db, Product, products)
        common._insert_many(db, Listing, listings)
        store_offers(tenant_id, offers)
    return skus


def rules(tenant_id, skus):
    """25 rules: every type, fixed and percent, scopes all/category/sku, no conflicts."""
    from commerce_api.pricing.rules import create_rule

    specs = [
        ("floor", "1.00", "fixed", "all", None, None, 1),
        ("margin_target", "5.00", "fixed", "all", None, None, 2),
    ]
    for i, category in enumerate(CATEGORIES):
        specs += [
            ("margin_target", "30", "percent", "category", category, None, 10 + i),
            ("floor", "10", "percent", "category", category, None, 20 + i),
            ("competitor_match", "-0.50", "fixed", "category", category, None, 50 + i),
            ("buy_box_target", "-1", "percent", "sku", None, skus[i * 100 : i * 100 + 100], 60 + i),
        ]
    for i, category in enumerate(CATEGORIES[:3]):
        specs.append(("ceiling", "150", "percent", "category", category, None, 30 + i))
    for kind, value, value_type, scope, category, rule_skus, priority in specs:
        create_rule(
            tenant_id,
            {
                "name": f"{kind} {scope} {category or ''} {priority}".strip(),
                "type": kind,
                "value": Decimal(value),
                "value_type": value_type,
                "applies_to": scope,
                "category": category,
                "skus": rule_skus,
                "marketplace": "all" if priority % 2 else MARKETPLACE,
                "priority": priority,
                "is_active": True,
            },
        )
    return len(specs)


def run_job(app, tenant_id, skus, apply, counter):
    """Queue one recalculation, run the worker until it is done; returns the figures."""
    from commerce_api.jobs.models import Job
    from commerce_api.jobs.worker import Worker
    from commerce_api.pricing.recalculate import request_recalculation

    with app.app_context():
        queued = request_recalculation(
            tenant_id, {"marketplace": MARKETPLACE, "skus": skus, "apply": apply}, "bench"
        )
    counter.take()
    started, cpu_started = time.perf_counter(), time.process_time()
    Worker(app, once=True, concurrency=1, install_signals=False).run()
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    statements = counter.take()
    with app.app_context():
        job = Job.get_by_id(queued["job_id"])
    if job.status != "completed":
        raise SystemExit(f"the job did not complete: {job.status} {job.error}")
    seconds = (job.completed_at - job.started_at) / 1000
    result = job.result
    chunk_size = int(app.config["PRICING_CHUNK_SIZE"])
    chunks = -(-len(skus) // chunk_size)
    return {
        "skus": len(skus),
        "chunks": chunks,
        "written": result["updated_count"],
        "applied": result["applied_count"],
        "fetched": result["competitor_fetch"]["skus_requested"],
        "seconds": seconds,
        "wall": wall,
        "cpu": cpu,
        "rate": len(skus) / seconds if seconds else float("inf"),
        "statements": statements,
        "per_chunk": statements / chunks,
    }


def main(argv=None):
    args = parse_args(argv)
    rng = random.Random(10)
    with common.temp_directory("commerce-bench-pricing-") as tmp:
        url = common.sqlite_url(os.path.join(tmp, "bench.db"))
        common.init_db(url)
        from commerce_api import create_app

        app = create_app({"DATABASE_URL": url, "RATE_LIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"})
        from commerce_api.db import db

        with app.app_context(), db.connection_context():
            tenant_id, _ = common.create_tenant_and_key()
            seeded = time.perf_counter()
            skus = seed(tenant_id, args.skus, rng)
            rule_count = rules(tenant_id, skus)
            seed_seconds = time.perf_counter() - seeded
        counter = StatementCounter(db.obj)
        print(
            f"seeded {len(skus):,} SKUs on {MARKETPLACE} (sandbox), {len(skus) * OFFERS:,} "
            f"competitor offers, {rule_count} rules in {seed_seconds:.1f} s; "
            f"chunk size {app.config['PRICING_CHUNK_SIZE']}"
        )
        runs = [
            ("apply=false", run_job(app, tenant_id, skus[: args.small], False, counter)),
            ("apply=false", run_job(app, tenant_id, skus, False, counter)),
        ]
        if args.apply:
            runs.append(("apply=true", run_job(app, tenant_id, skus, True, counter)))
        db.close()
    print()
    print(
        f"{'run':<12} {'SKUs':>7} {'chunks':>6} {'written':>8} {'applied':>8} "
        f"{'job s':>7} {'CPU s':>6} {'SKUs/s':>7} {'statements':>10}"
    )
    for label, run in runs:
        print(
            f"{label:<12} {run['skus']:>7,} {run['chunks']:>6} {run['written']:>8,} "
            f"{run['applied']:>8,} {run['seconds']:>7.2f} {run['cpu']:>6.2f} "
            f"{run['rate']:>7,.0f} {run['statements']:>10,}"
        )
    small, large = runs[0][1], runs[1][1]
    # statements = fixed + per_chunk x chunks, fitted on the two runs
    per_chunk = (large["statements"] - small["statements"]) / (large["chunks"] - small["chunks"])
    per_sku = (large["statements"] - small["statements"]) / (large["skus"] - small["skus"])
    fixed = small["statements"] - per_chunk * small["chunks"]
    print()
    print(
        f"statements: {small['statements']} for {small['skus']:,} SKUs ({small['chunks']} "
        f"chunks), {large['statements']} for {large['skus']:,} SKUs ({large['chunks']} chunks): "
        f"about {fixed:.0f} + {per_chunk:.1f} per chunk, {per_sku:.3f} per additional SKU"
    )
    failures = []
    if large["skus"] >= SKUS and large["seconds"] > BAR_SECONDS:
        failures.append(f"the {large['skus']:,}-SKU job took {large['seconds']:.1f} s")
    if per_sku > 0.05:  # at least 20 SKUs per statement: it grows with chunks, not SKUs
        failures.append(f"{per_sku:.3f} statements per additional SKU")
    if failures:
        print("BAR FAILED: " + "; ".join(failures))
        return 1
    print(f"bar met: {large['skus']:,} SKUs in {large['seconds']:.1f} s (<= {BAR_SECONDS:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
