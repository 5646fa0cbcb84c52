"""The marketplace-boundary soak (issue 19), run by hand: ``.venv/bin/python bench/soak.py``.

Runs the API (gunicorn) and two ``commerce-api worker`` processes on a fresh database
(``--engine sqlite``, ``postgres`` or ``both``), with several tenants, each connected to a
fake marketplace on 127.0.0.1 that answers in 30-300 ms, 5 % with 503, 3 % with 429 and 2 %
too slowly (it takes the change, then answers after the deadline), and webhook receivers of
which one fails often. Clients change stock, confirm shipments of the orders the
marketplaces bring, cancel some, sync products and change listing buffers; before every
worker kill (SIGKILL, every ``--kill-every`` seconds, the worker restarted at once) a
``pricing_recalculate`` with ``apply: true`` is started, so a kill lands during one.

A database-failover phase follows the load (``--failover-seconds``; no worker is killed
in it): the load goes on while, twice, every connection to the database is cut, as a
failover or a restart does (PostgreSQL: ``pg_terminate_backend`` of every backend of the
service; SQLite: the file held under an exclusive lock past the busy time-out). The
workers must go on without a restart: none may exit, webhooks and listing pushes must go
out after the last cut, and readiness must report no stalled loop of a live worker once
the service settled.

``--amazon-tenants`` (1) more tenants use the ``amazon`` connector against the SP-API
contract fake (answering in 30 ms, a 503 and an unplanned 429 now and then): the fake
must refuse no request and answer no 429 from its usage plans (the rate budgets).
``--shopify-tenants`` (1) more use the ``shopify`` connector against the Admin GraphQL
contract fake (bucket 100 points restoring 50 a second, answering in 30 ms), their own
warehouse mapped to its location; each new order is created in the fake and its signed
``orders/create`` POSTed to the notification route: the fake must refuse no document,
answer nothing THROTTLED and no answer of its may break the schema, and every order created
in it must be imported.

Then it lets the service settle, for as long as the work left keeps shrinking (at most
``--settle`` seconds; it stops after ``--stall`` seconds without progress: the backlog of a
long run drains at the fakes' pace, a stuck worker does not drain it), and checks:
  - every listing's last pushed quantity equals its available stock minus its buffer,
    and its price the marketplace's last accepted price (the listing is not in error);
  - stock equals the ledger (every stock row's on_hand and reserved);
  - no job is left running or queued (but the periodic order pulls), no claim is left;
  - every product sync job completed;
  - no answer was a 500;
  - the failover phase: no worker exited, webhooks were delivered after the last cut,
    no loop of a live worker is stalled at the end.
It prints a summary per engine with a violations count; exit status 1 when any.
"""

import argparse
import collections
import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402
from soak_fakes import (  # noqa: E402
    MARKETPLACE,
    AmazonMarket,
    Marketplace,
    Receiver,
    ShopifyMarket,
)

PG_ADMIN_URL = os.environ.get("SOAK_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
DEADLINE = 2.0  # MARKETPLACE_DEADLINE_SECONDS of the service
WAREHOUSE = {"name": "Main", "type": "own", "address": "1 Road"}
WEBHOOK_EVENTS = ["order.created", "order.shipped", "listing.sync_failed"]
SERVICE_CONFIG = {
    "RATE_LIMIT_ENABLED": 0,
    "MARKETPLACE_DEADLINE_SECONDS": DEADLINE,
    "MARKETPLACE_READ_TIMEOUT": DEADLINE,
    "MARKETPLACE_CONNECT_TIMEOUT": 1,
    "CLAIM_LEASE_SECONDS": 4,
    "ORDER_PULL_INTERVAL_SECONDS": 5,
    "WORKER_LEASE_SECONDS": 5,
    "WORKER_RETRY_BACKOFF_SECONDS": 1,
    "WORKER_CONCURRENCY": 2,
    "COMPETITOR_MAX_AGE_SECONDS": 20,
    "WEBHOOK_ALLOW_PRIVATE_TARGETS": 1,
    "WEBHOOK_RETRY_SCHEDULE": "1,2,4,8",
    "WEBHOOK_TIMEOUT_SECONDS": 2,
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--duration", type=float, default=240, help="seconds of load")
    parser.add_argument("--kill-every", type=float, default=60, help="seconds between kills")
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument(
        "--amazon-tenants", type=int, default=1, help="tenants on the SP-API contract fake"
    )
    parser.add_argument(
        "--shopify-tenants",
        type=int,
        default=1,
        help="tenants on the Shopify contract fake, their orders notified",
    )
    parser.add_argument("--skus", type=int, default=12, help="SKUs per tenant")
    parser.add_argument("--clients", type=int, default=2, help="client threads per tenant")
    parser.add_argument(
        "--settle",
        type=float,
        default=900,
        help="seconds to settle at most, while the work left keeps shrinking",
    )
    parser.add_argument(
        "--stall",
        type=float,
        default=60,
        help="settling stops when the work left has not shrunk for this many seconds",
    )
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument(
        "--failover-seconds",
        type=float,
        default=60,
        help="seconds of load with two database cuts and no worker kill (0: no phase)",
    )
    return parser.parse_args(argv)


# Databases ---------------------------------------------------------------------------------


@contextlib.contextmanager
def database(engine, directory):
    if engine == "sqlite":
        yield common.sqlite_url(os.path.join(directory, "soak.db"))
        return
    import psycopg2

    name = f"soak_{uuid.uuid4().hex[:10]}"
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


class Tenant:
    def __init__(self, tenant_id, secret, skus, market, warehouse_id):
        self.id = tenant_id
        self.headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant_id}
        self.skus = skus
        self.market = market
        self.warehouse_id = warehouse_id


def set_up_tenants(args, rng):
    """Tenants, keys and a connection to each one's fake marketplace (made in this process:
    the API refuses a private base_url)."""
    from commerce_api.db import db
    from commerce_api.inventory.services import create_warehouse
    from commerce_api.marketplaces.services import connect_marketplace

    tenants = []
    with db.connection_context():
        for t in range(args.tenants):
            tenant_id, secret = common.create_tenant_and_key()
            skus = [f"SOAK-{t}-{n:02d}" for n in range(args.skus)]
            market = Marketplace(skus, random.Random(rng.random()), DEADLINE)
            connect_marketplace(
                tenant_id,
                MARKETPLACE,
                "http",
                base_url=market.url,
                api_token=f"token-{t}",
                created_by="soak",
                allow_private=True,
            )
            tenants.append(Tenant(tenant_id, secret, skus, market, None))
        for t in range(args.amazon_tenants):
            # the amazon connector against the SP-API contract fake, under the same load
            tenant_id, secret = common.create_tenant_and_key()
            skus = [f"AMZ-{t}-{n:02d}" for n in range(args.skus)]
            market = AmazonMarket(skus, random.Random(rng.random()))
            connect_marketplace(
                tenant_id,
                MARKETPLACE,
                "amazon",
                settings=market.fake.settings(),
                credentials=market.fake.credentials(),
                created_by="soak",
                allow_private=True,
            )
            tenants.append(Tenant(tenant_id, secret, skus, market, None))
        for t in range(args.shopify_tenants):
            # the shopify connector against the Admin GraphQL contract fake: its own
            # warehouse mapped to the fake's location (so made before connecting)
            tenant_id, secret = common.create_tenant_and_key()
            skus = [f"SHP-{t}-{n:02d}" for n in range(args.skus)]
            market = ShopifyMarket(skus, random.Random(rng.random()))
            warehouse = create_warehouse(tenant_id, WAREHOUSE)["id"]
            market.connection_id = connect_marketplace(
                tenant_id,
                MARKETPLACE,
                "shopify",
                settings=market.fake.settings(warehouse),
                credentials=market.fake.credentials(),
                created_by="soak",
                allow_private=True,
            ).id
            tenants.append(Tenant(tenant_id, secret, skus, market, warehouse))
    return tenants


def seed(base, tenant, receivers):
    """Products, a warehouse with stock, a repricing rule, webhooks, a first sync: over HTTP."""

    def call(method, path, body, expect):
        response = requests.request(
            method, base + path, json=body, headers=tenant.headers, timeout=30
        )
        if response.status_code != expect:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json().get("data") if response.content else None

    for sku in tenant.skus:
        call("POST", "/api/products", product_body(sku), 201)
    if tenant.warehouse_id is None:  # (a Shopify tenant's was made to be mapped)
        tenant.warehouse_id = call("POST", "/api/inventory/warehouses", WAREHOUSE, 201)["id"]
    if isinstance(tenant.market, ShopifyMarket):
        tenant.market.attach(base)  # its orders are notified from now on
    for sku in tenant.skus:
        body = {"warehouse_id": tenant.warehouse_id, "quantity": 40, "reason": "cycle_count"}
        call("PUT", f"/api/inventory/{sku}", body, 200)
    rule = {"name": "match", "type": "competitor_match", "value": -0.5, "value_type": "fixed"}
    call("POST", "/api/pricing/rules", rule, 201)
    for receiver in receivers:
        call("POST", "/api/webhooks", {"url": receiver.url, "events": WEBHOOK_EVENTS}, 201)
    for sku in tenant.skus:
        # a price first: a listing without one is held, never pushed
        call("PATCH", f"/api/products/{sku}/listings/{MARKETPLACE}", {"price": 20.0}, 200)
        call("POST", f"/api/products/{sku}/sync", {}, 202)


def product_body(sku):
    return {
        "sku": sku,
        "title": "Soak mug",
        "description": "A mug.",
        "status": "active",
        "gtin": "4006381333931",
        "cost_price": 3.5,
        "weight_kg": 0.35,
        "images": [],
    }


# Processes ---------------------------------------------------------------------------------


class Workers:
    """Two ``commerce-api worker`` processes; ``kill`` one with SIGKILL and restart it."""

    def __init__(self, env, log_path):
        self.env = env
        self.log = open(log_path, "ab")  # noqa: SIM115 - kept open for every restart
        self.procs = [self._start(), self._start()]
        self.kills = 0

    def _start(self):
        return subprocess.Popen(
            [sys.executable, "-m", "commerce_api.cli", "worker"],
            cwd=common.ROOT,
            env=self.env,
            start_new_session=True,
            stdout=self.log,
            stderr=self.log,
        )

    def kill(self, index):
        os.killpg(self.procs[index].pid, signal.SIGKILL)
        self.procs[index].wait(10)
        self.kills += 1
        self.procs[index] = self._start()

    def revive(self):
        """Restart a worker that exited; returns how many did."""
        exited = 0
        for index, proc in enumerate(self.procs):
            if proc.poll() is not None:
                self.procs[index] = self._start()
                exited += 1
        return exited

    def stop(self):
        for proc in self.procs:
            common.stop_process(proc, timeout=40)
        self.log.close()


def log_errors(path, window=None):
    """What the workers logged: tracebacks, deadlocks, "database is locked" (not within
    ``window``, the failover phase's byte range of the log, where they are the point)."""
    with open(path, "rb") as log:
        data = log.read()
    if window:
        data = data[: window[0]] + data[window[1] :]
    return _log_counts(data.decode(errors="replace"))


def failover_log(path, window):
    """What the workers logged during the failover phase (lost connections, locks)."""
    if not window:
        return {}
    with open(path, "rb") as log:
        text = log.read()[window[0] : window[1]].decode(errors="replace")
    counts = _log_counts(text)
    counts["connection_lost"] = sum(
        text.count(s)
        for s in (
            "connection already closed",
            "server closed the connection",
            "terminating connection",
        )
    )
    return counts


def _log_counts(text):
    return {
        "tracebacks": text.count("Traceback (most recent call last)"),
        "deadlocks": text.count("deadlock detected"),
        "database_locked": text.count("OperationalError: database is locked"),
    }


# Load --------------------------------------------------------------------------------------


class Client:
    """One client thread of a tenant: random changes until ``stop``; counts statuses."""

    def __init__(self, base, tenant, rng, statuses, stop):
        self.base, self.tenant, self.rng = base, tenant, rng
        self.statuses, self.stop = statuses, stop
        self.session = requests.Session()

    def call(self, method, path, body=None):
        try:
            response = self.session.request(
                method, self.base + path, json=body, headers=self.tenant.headers, timeout=30
            )
        except requests.RequestException:
            self.statuses["error"] += 1
            return None
        self.statuses[response.status_code] += 1
        if response.status_code >= 500:
            code = response.status_code
            if code == 503:  # which: a marketplace unavailable, or the database busy
                with contextlib.suppress(ValueError, KeyError):
                    code = f"503 {response.json()['error']['code']}"
            self.statuses[f"{method} {path.split('/')[2]} {code}"] += 1
        return response

    def run(self):
        actions = [
            (40, self.set_stock),
            (20, self.ship),
            (10, self.sync),
            (10, self.buffer),
            (10, self.read),
            (5, self.cancel),
        ]
        weights = [w for w, _ in actions]
        while not self.stop.is_set():
            self.rng.choices([a for _, a in actions], weights)[0]()
            self.stop.wait(self.rng.uniform(0.05, 0.25))

    def set_stock(self):
        body = {
            "warehouse_id": self.tenant.warehouse_id,
            "quantity": self.rng.randint(0, 60),
            "reason": "cycle_count",
        }
        self.call("PUT", f"/api/inventory/{self.rng.choice(self.tenant.skus)}", body)

    def _an_order(self):
        response = self.call("GET", "/api/orders?status=pending&limit=10")
        if response is None or response.status_code != 200:
            return None
        orders = response.json()["data"]
        return self.rng.choice(orders)["id"] if orders else None

    def ship(self):
        order_id = self._an_order()
        if order_id:
            body = {"carrier": "UPS", "tracking_number": f"1Z{self.rng.randrange(10**8)}"}
            self.call("POST", f"/api/orders/{order_id}/shipment", body)

    def cancel(self):
        order_id = self._an_order()
        if order_id:
            self.call("POST", f"/api/orders/{order_id}/cancel", {"reason": "customer_request"})

    def sync(self):
        self.call("POST", f"/api/products/{self.rng.choice(self.tenant.skus)}/sync", {})

    def buffer(self):
        sku = self.rng.choice(self.tenant.skus)
        body = {"stock_buffer": self.rng.randint(0, 3)}
        self.call("PATCH", f"/api/products/{sku}/listings/{MARKETPLACE}", body)

    def read(self):
        self.call("GET", f"/api/products/{self.rng.choice(self.tenant.skus)}")


def recalculate(base, tenant, statuses):
    response = requests.post(
        base + "/api/pricing/recalculate",
        json={"marketplace": MARKETPLACE, "apply": True},
        headers=tenant.headers,
        timeout=30,
    )
    statuses[response.status_code] += 1
    return response.json()["data"]["job_id"] if response.status_code == 200 else None


# The database-failover phase ---------------------------------------------------------------

SQLITE_LOCK_SECONDS = 17  # past the service's busy time-out (15 s): its writes fail meanwhile


def cut_database(engine, url):
    """Cut every connection of the service to the database, as a failover does; returns
    what was done (PostgreSQL: backends terminated; SQLite: the lock's thread)."""
    if engine == "postgres":
        import psycopg2

        admin = psycopg2.connect(PG_ADMIN_URL)
        admin.autocommit = True
        try:
            with admin.cursor() as cursor:
                cursor.execute(
                    "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    (url.rsplit("/", 1)[1],),
                )
                return {"terminated": cursor.fetchone()[0]}
        finally:
            admin.close()
    from commerce_api.db import sqlite_path

    def hold():
        import sqlite3

        holder = sqlite3.connect(sqlite_path(url), timeout=60, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            time.sleep(SQLITE_LOCK_SECONDS)
            holder.execute("ROLLBACK")
        finally:
            holder.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return {"locked_seconds": SQLITE_LOCK_SECONDS, "thread": thread}


def failover_phase(args, engine, url, base, tenants, workers, receivers, statuses):
    """Load for ``--failover-seconds`` with two cuts and no kill; returns its record."""
    record = {"cuts": [], "worker_exits": 0, "webhooks_before_last_cut": 0}
    if args.failover_seconds <= 0:
        return record
    started = time.monotonic()
    log_start = os.path.getsize(workers.log.name)  # (the workers append to it themselves)
    cuts = [started + args.failover_seconds / 6, started + args.failover_seconds / 2]
    threads = []
    next_order = started
    while time.monotonic() < started + args.failover_seconds:
        if time.monotonic() >= next_order:
            for tenant in tenants:
                tenant.market.new_order()
            next_order += 2.0
        if cuts and time.monotonic() >= cuts[0]:
            cuts.pop(0)
            if not cuts:  # the last cut: what was delivered before it
                record["webhooks_before_last_cut"] = sum(
                    sum(r.received.values()) for r in receivers
                )
            done = cut_database(engine, url)
            if "thread" in done:
                threads.append(done.pop("thread"))
            record["cuts"].append(done)
            # a recalculation with apply right after the cut (its job runs after it)
            recalculate(base, tenants[0], statuses)
        record["worker_exits"] += workers.revive()
        time.sleep(0.2)
    for thread in threads:
        thread.join(SQLITE_LOCK_SECONDS + 5)
    time.sleep(2)  # a write that waited out the lock logs its failure just after it
    workers.log.flush()
    record["log_window"] = (log_start, os.path.getsize(workers.log.name))
    record["worker_pids"] = [proc.pid for proc in workers.procs]
    return record


def failover_violations(record, base, receivers):
    """What the failover phase left wrong (checked after settling)."""
    violations = []
    if not record["cuts"]:
        return violations
    if record["worker_exits"]:
        violations.append(("worker_exited_during_failover", record["worker_exits"]))
    delivered = sum(sum(r.received.values()) for r in receivers)
    if delivered <= record["webhooks_before_last_cut"]:
        violations.append(("no_webhook_after_failover", delivered))
    ready = requests.get(base + "/api/health/ready", timeout=10).json()
    pids = {str(pid) for pid in record["worker_pids"]}
    stalled = [
        item
        for item in ready["checks"]["workers"]["stalled"]
        if item["worker"].split(":")[1] in pids  # killed workers' rows linger a while
    ]
    if stalled:
        violations.append(("worker_loops_stalled", stalled))
    return violations


# Settling and checking ---------------------------------------------------------------------


def busy_work(tenants):
    """What is still to do: running or queued jobs (but queued periodic order pulls),
    pending listings, claims, orders created in a Shopify fake not yet imported."""
    from commerce_api.claims import OperationClaim
    from commerce_api.jobs.models import Job
    from commerce_api.products.models import Listing

    jobs = [
        f"{job.type} {job.status} attempt {job.attempts}"
        for job in Job.select().where(
            (Job.status == "running") | ((Job.status == "queued") & (Job.type != "order_pull"))
        )
    ]
    pending = Listing.select().where(Listing.sync_status == "pending").count()
    claims = [f"{c.operation} {c.token}" for c in OperationClaim.select()]
    missing = sum(len(missing_orders(t)) for t in tenants if isinstance(t.market, ShopifyMarket))
    return {
        "jobs": jobs,
        "pending_listings": pending,
        "claims": claims,
        "shopify_orders_missing": missing,
    }


def settle(args, workers, phase, tenants):
    """Wait for the work left (``busy_work``) to be done: at most ``args.settle`` seconds,
    and no longer than ``args.stall`` seconds without it shrinking (a backlog that drains
    at the marketplaces' pace is waited for; a stuck one is not). Returns (seconds, stalled)."""
    started = last_progress = time.monotonic()
    smallest = None
    while time.monotonic() - started < args.settle:
        phase["worker_exits"] += workers.revive()
        left = busy_work(tenants)
        size = sum(len(v) if isinstance(v, list) else v for v in left.values())
        if not size:
            return time.monotonic() - started, False
        if smallest is None or size < smallest:
            smallest, last_progress = size, time.monotonic()
        elif time.monotonic() - last_progress > args.stall:
            return time.monotonic() - started, True
        time.sleep(1)
    return time.monotonic() - started, False


def missing_orders(tenant):
    """The orders created in a tenant's Shopify fake that are not in the service."""
    from commerce_api.orders.models import Order

    imported = set(
        Order.select(Order.external_order_id)
        .where((Order.tenant == tenant.id) & (Order.marketplace == MARKETPLACE))
        .tuples()
    )
    return [gid for gid in list(tenant.market.orders) if (gid,) not in imported]


def shopify_orders(tenant, counts):
    """A Shopify tenant's orders: every one created in the fake imported; its notifications
    answered (a 503 or no answer while the database is cut is expected: Shopify retries,
    and the cursor pull finds the order; any other 5xx is a violation)."""
    violations = []
    missing = missing_orders(tenant)
    counts["shopify orders"] = len(tenant.market.orders)
    counts["shopify orders missing"] = len(missing)
    if missing:
        violations.append(("shopify_order_missing", missing[:5]))
    for status, count in tenant.market.notified.items():
        counts[f"shopify notifications {status}"] = count
        if isinstance(status, int) and status >= 500 and status != 503:
            violations.append(("notification_5xx", f"{count} x {status}"))
    return violations


def check(tenants, statuses):
    """The violations, as ``[(check, detail)]``, and the counts checked."""

    from peewee import fn

    from commerce_api.claims import OperationClaim
    from commerce_api.inventory.models import Adjustment, Stock
    from commerce_api.jobs.models import Job
    from commerce_api.marketplaces.listing_push import desired_quantity, own_available
    from commerce_api.products.models import Listing, Product

    violations, counts = [], collections.Counter()
    tenant_of = {t.id: type(t.market).__name__ for t in tenants}
    for tenant in tenants:
        rows = list(
            Listing.select(Listing, Product.sku, Product.status.alias("product_status"))
            .join(Product, on=(Listing.product == Product.id))
            .where(Listing.tenant == tenant.id)
            .dicts()
        )
        available = own_available([row["product"] for row in rows])
        for row in rows:
            counts["listings"] += 1
            held = tenant.market.listings.get(row["sku"])
            if held is None:
                violations.append(("listing_never_pushed", row["sku"]))
                continue
            want = desired_quantity(available.get(row["product"], 0), row["stock_buffer"])
            if held["quantity"] != want:
                last = tenant.market.history[row["sku"]][-3:]
                violations.append(
                    ("quantity", f"{row['sku']}: {held['quantity']} != {want} (last: {last})")
                )
            if row["price"] is None or float(row["price"]) != float(held["price"]):
                violations.append(("price", f"{row['sku']}: {row['price']} != {held['price']}"))
            if row["sync_status"] != "in_sync":
                violations.append(("sync_status", f"{row['sku']}: {row['sync_status']}"))
        for sku in tenant.skus:
            if sku not in {row["sku"] for row in rows}:
                violations.append(("never_listed", sku))
        if isinstance(tenant.market, AmazonMarket | ShopifyMarket):
            # the contracts: nothing refused by the fake, no 429 from Amazon's usage plans,
            # nothing THROTTLED by Shopify's cost bucket (the budgets), no bad answer
            for fault, count in tenant.market.faults.items():
                name = fault if fault.startswith("shopify") else f"amazon {fault}"
                counts[name] = count
                if count:
                    violations.append((name, count))
        if isinstance(tenant.market, ShopifyMarket):
            violations += shopify_orders(tenant, counts)
            if tenant.market.fake.throttled:
                violations.append(("shopify throttled queries", tenant.market.throttled()))
    for stock in Stock.select():
        counts["stock_rows"] += 1
        sums = collections.Counter()
        for kind, delta in (
            Adjustment.select(Adjustment.quantity_type, Adjustment.delta)
            .where(Adjustment.stock == stock.id)
            .tuples()
        ):
            sums[kind] += delta
        if (stock.on_hand, stock.reserved) != (sums["on_hand"], sums["reserved"]):
            violations.append(("ledger", f"{stock.sku}: {stock.on_hand}/{stock.reserved}"))
    for job in Job.select().where(Job.status.in_(("queued", "running"))):
        if job.status == "running" or job.type != "order_pull":
            violations.append(("job_left", f"{job.type} {job.id} {job.status}"))
    for job_type, status, count in (
        Job.select(Job.type, Job.status, fn.COUNT(Job.id)).group_by(Job.type, Job.status).tuples()
    ):
        counts[f"jobs {job_type} {status}"] = count
        if job_type == "marketplace_sync" and status != "completed":
            errors = [
                (tenant_of.get(job.tenant_id, job.tenant_id), job.error)
                for job in Job.select().where((Job.type == job_type) & (Job.status == status))[:3]
            ]
            violations.append(("sync_not_completed", f"{count} {status}: {errors}"))
    for claim in OperationClaim.select():
        violations.append(("claim_left", f"{claim.operation} {claim.resource_id}"))
    errors = sum(
        n
        for status, n in statuses.items()
        if isinstance(status, int) and status >= 500 and status != 503
    )
    if errors:
        violations.append(("http_5xx", errors))
    return violations, counts


# The run -----------------------------------------------------------------------------------


def run_engine(engine, args):
    rng = random.Random(args.seed)
    with common.temp_directory("commerce-soak-") as directory, database(engine, directory) as url:
        common.init_db(url)
        common.bind_database(url)
        receivers = [Receiver(False, random.Random(1)), Receiver(True, random.Random(2))]
        tenants = set_up_tenants(args, rng)
        env = common.child_env(url, **SERVICE_CONFIG)
        env["COMMERCE_LOG_LEVEL"] = "ERROR"
        statuses = collections.Counter()
        started = time.monotonic()
        with common.gunicorn("wsgi:app", env, workers=2) as base:
            worker_log = os.path.join(directory, "workers.log")
            workers = Workers(env, worker_log)
            try:
                for tenant in tenants:
                    seed(base, tenant, receivers)
                stop = threading.Event()
                clients = [
                    threading.Thread(
                        target=Client(base, t, random.Random(rng.random()), statuses, stop).run
                    )
                    for t in tenants
                    for _ in range(args.clients)
                ]
                for thread in clients:
                    thread.start()
                load_until = time.monotonic() + args.duration
                next_kill = time.monotonic() + args.kill_every
                next_order = time.monotonic()
                recalcs = 0
                while time.monotonic() < load_until:
                    if time.monotonic() >= next_order:
                        for tenant in tenants:
                            tenant.market.new_order()
                        next_order += 2.0
                    if time.monotonic() >= next_kill:
                        # start an apply:true recalculation, then kill a worker during it
                        recalcs += sum(1 for t in tenants if recalculate(base, t, statuses))
                        time.sleep(1.5)
                        workers.kill(workers.kills % 2)
                        next_kill += args.kill_every
                    workers.revive()
                    time.sleep(0.2)
                phase = failover_phase(
                    args, engine, url, base, tenants, workers, receivers, statuses
                )
                # one last recalculation with apply after the load
                recalcs += sum(1 for t in tenants if recalculate(base, t, statuses))
                stop.set()
                for thread in clients:
                    thread.join(60)
                load_seconds = time.monotonic() - started
                settle_seconds, stalled = settle(args, workers, phase, tenants)
                left = busy_work(tenants)
                # before the workers stop: readiness reads their loops
                failover_found = failover_violations(phase, base, receivers)
            finally:
                workers.stop()
        violations, counts = check(tenants, statuses)
        violations += failover_found
        logged = log_errors(worker_log, phase.get("log_window"))
        # read while the folder is there (it goes with the block around this one)
        during_failover = failover_log(worker_log, phase.get("log_window"))
        if logged["deadlocks"] or logged["database_locked"]:
            violations.append(("worker_log", logged))
        for receiver in receivers:
            receiver.close()
        faults = sum((t.market.faults for t in tenants), collections.Counter())
        for tenant in tenants:
            tenant.market.close()
    return {
        "engine": engine,
        "load_seconds": round(load_seconds, 1),
        "settle_seconds": round(settle_seconds, 1),
        "settle_stalled": stalled,
        "left_after_settling": left,
        "worker_kills": workers.kills,
        "failover_cuts": phase["cuts"],
        "worker_exits_during_failover": phase["worker_exits"],
        "recalculations_apply": recalcs,
        "marketplace_faults": dict(faults),
        "webhook_receipts": [dict(r.received) for r in receivers],
        "http_statuses": {str(k): v for k, v in sorted(statuses.items(), key=str)},
        "worker_log": logged,
        "worker_log_during_failover": during_failover,
        "checked": dict(counts),
        "violations": len(violations),
        "violation_samples": violations[:20],
    }


def main(argv=None):
    args = parse_args(argv)
    engines = ("sqlite", "postgres") if args.engine == "both" else (args.engine,)
    failed = False
    for engine in engines:
        summary = run_engine(engine, args)
        print(f"== soak summary: {engine} ==")
        for key, value in summary.items():
            print(f"  {key}: {value}")
        print(f"  RESULT: {'OK' if summary['violations'] == 0 else 'VIOLATIONS'}", flush=True)
        failed = failed or summary["violations"] > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
