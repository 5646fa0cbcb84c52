"""Webhook delivery benchmark (issues 11, 21): ``.venv/bin/python bench/webhooks.py``.

A real ``commerce-api worker`` process delivers 5,000 outbox events to 1 and then to 5
endpoints of one tenant, on a loopback receiver (a threaded HTTP server in this process,
keep-alive) that checks every delivery's two signatures (``X-Service-Signature`` and the
Standard Webhooks ``webhook-signature``) with the standard library.

The events are written while the worker runs, by one producer, ``--per-commit`` events per
transaction, spread over ``--resources`` orders (``order.updated``), so per-resource
ordering is exercised. Printed per case:

  deliveries/s   deliveries / (last receipt - first commit)
  p50/p99        commit-to-receipt latency: when the event's transaction committed to when
                 the receiver got it (the backlog the burst builds is part of it)
  duplicates     a delivery id received more than once
  out of order   an event of a resource arriving at an endpoint after a later one had
  bad signature  a delivery whose either signature does not verify

Then the two-tenant case (issue 21): tenant B has 20 endpoints whose receivers hang
(they answer nothing until the worker gives up, after one attempt's time-out) and 25
events, so 500 deliveries pending and retried; once B's sends hold the worker's threads,
tenant A writes ``--fair-events`` events at ``--fair-rate`` per second to one fast
endpoint. Printed: A's commit-to-receipt p50/p99/max, B's attempts meanwhile, and the most
sends one endpoint ever had in flight (the receiver counts them).

Bar: >= 300 deliveries/s, 0 duplicates, 0 out of order, 0 bad signatures, nothing missing;
A's slowest delivery within one attempt's time-out (exit status 1 otherwise). The goal of
1,000 deliveries/s is reported, not enforced. ``--profile FILE`` samples the worker with
py-spy during the throughput cases and prints where its CPU time goes. SQLite by default
(a temporary file); ``--database-url`` for a PostgreSQL database (its webhook tables and
outbox are used as they are: use an empty one).
"""

import argparse
import base64
import collections
import hashlib
import hmac
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (  # noqa: E402
    HOST,
    bind_database,
    child_env,
    init_db,
    sqlite_url,
    stop_process,
    temp_directory,
)

BAR_PER_SECOND = 300
GOAL_PER_SECOND = 1000
TIMEOUT_SECONDS = 10.0  # one attempt's time-out (the default)


class Receiver:
    """Counts, times and verifies every delivery; ``/hooks/<n>`` is endpoint n."""

    def __init__(self):
        self.lock = threading.Lock()
        self.secrets = {}  # path -> secret
        self.closing = threading.Event()
        self.in_flight = collections.Counter()
        self.max_in_flight = collections.Counter()
        self.hangs = 0
        self.reset()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                now = time.time()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.begin(self.path)
                if self.path.startswith("/hang/"):
                    self.hang()
                    receiver.end(self.path)
                    return
                receiver.record(self.path, self.headers, body, now)
                receiver.end(self.path)  # answered: the sender may send the next one
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def hang(self):
                """Answer nothing until the worker hangs up (its time-out)."""
                self.close_connection = True
                while not receiver.closing.is_set():
                    if select.select([self.connection], [], [], 0.05)[0]:
                        try:
                            if not self.connection.recv(1024):
                                return
                        except OSError:
                            return

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, n, kind="hooks"):
        return f"http://{HOST}:{self.server.server_address[1]}/{kind}/{n}"

    def begin(self, path):
        with self.lock:
            self.in_flight[path] += 1
            self.max_in_flight[path] = max(self.max_in_flight[path], self.in_flight[path])
            self.hangs += path.startswith("/hang/")

    def end(self, path):
        with self.lock:
            self.in_flight[path] -= 1

    def hanging(self):
        with self.lock:
            return sum(n for path, n in self.in_flight.items() if path.startswith("/hang/"))

    def reset(self):
        with self.lock:
            self.received = {}  # (path, event id) -> receipt time (first)
            self.deliveries = collections.Counter()
            self.last_n = {}  # (path, resource) -> highest n seen
            self.out_of_order = 0
            self.max_in_flight.clear()
            self.hangs = 0
            self.bad_signatures = 0
            self.count = 0
            self.last_at = None

    def record(self, path, headers, body, now):
        secret = self.secrets.get(path)
        good = secret is not None and verify(secret, body, headers)
        event = json.loads(body)
        key = (path, event["data"]["resource"])
        with self.lock:
            self.count += 1
            self.last_at = now
            if not good:
                self.bad_signatures += 1
            self.deliveries[headers.get("X-Service-Delivery")] += 1
            self.received.setdefault((path, event["id"]), now)
            n = event["data"]["n"]
            if n < self.last_n.get(key, -1):
                self.out_of_order += 1
            self.last_n[key] = max(n, self.last_n.get(key, -1))

    def close(self):
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


def verify(secret, body, headers):
    """Both schemes, standard library only (what the README shows a receiver)."""
    github = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(github, headers.get("X-Service-Signature", "")):
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(expected, s) for s in headers["webhook-signature"].split())


def process_cpu_seconds(pid):
    """User + system CPU seconds of a process and its threads (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def run_case(args, receiver, endpoints, worker_pid):
    from commerce_api.auth.services import create_tenant
    from commerce_api.db import db, write_transaction
    from commerce_api.events import emit
    from commerce_api.webhooks.endpoints import create_endpoint
    from commerce_api.webhooks.models import WebhookDelivery

    receiver.reset()
    with db.connection_context():
        tenant = create_tenant(f"Bench {endpoints} endpoints", "enterprise")
        for n in range(endpoints):
            hook = create_endpoint(tenant.id, {"url": receiver.url(n), "events": ["*"]})
            receiver.secrets[f"/hooks/{n}"] = hook["secret"]

    committed = {}
    cpu_worker = process_cpu_seconds(worker_pid)
    cpu_bench = time.process_time()
    with db.connection_context():
        started = time.time()
        for first in range(0, args.events, args.per_commit):
            ids = []
            with write_transaction():
                for n in range(first, min(args.events, first + args.per_commit)):
                    resource = f"ord_{n % args.resources}"
                    data = {"resource": resource, "n": n, "status": "processing"}
                    ids.append(emit(tenant.id, "order.updated", "order", resource, data))
            at = time.time()
            for event_id in ids:
                committed[event_id] = at
        produced = time.time() - started

    expected = args.events * endpoints
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        with receiver.lock:
            if len(receiver.received) >= expected:
                break
        time.sleep(0.05)
    cpu_worker = process_cpu_seconds(worker_pid) - cpu_worker
    cpu_bench = time.process_time() - cpu_bench
    time.sleep(0.5)  # late duplicates, if any, would arrive now
    with receiver.lock:
        latencies = [
            (at - committed[event_id]) * 1000 for (_, event_id), at in receiver.received.items()
        ]
        received = len(receiver.received)
        duplicates = sum(c - 1 for c in receiver.deliveries.values())
        elapsed = (receiver.last_at or time.time()) - started
        result = {
            "endpoints": endpoints,
            "deliveries": received,
            "expected": expected,
            "per_second": received / elapsed if elapsed > 0 else 0.0,
            "p50_ms": percentile(latencies, 50),
            "p99_ms": percentile(latencies, 99),
            "duplicates": duplicates,
            "out_of_order": receiver.out_of_order,
            "bad_signatures": receiver.bad_signatures,
            "produce_s": produced,
            "elapsed_s": elapsed,
            "worker_cpu_ms": 1000 * cpu_worker / max(1, received),
            "bench_cpu_ms": 1000 * cpu_bench / max(1, received),
            "max_in_flight": max(receiver.max_in_flight.values(), default=0),
        }
    with db.connection_context():
        result["recorded"] = (
            WebhookDelivery.select()
            .where(
                (WebhookDelivery.tenant_id == tenant.id) & (WebhookDelivery.status == "succeeded")
            )
            .count()
        )
    return result


def run_two_tenants(args, receiver, threads):
    """B's 20 hanging endpoints and 500 pending deliveries; A's latency meanwhile."""
    from commerce_api.auth.services import create_tenant
    from commerce_api.db import db, write_transaction
    from commerce_api.events import emit
    from commerce_api.webhooks.endpoints import create_endpoint

    receiver.reset()
    with db.connection_context():
        tenant_b = create_tenant("Bench hanging receivers", "enterprise")
        for n in range(20):
            create_endpoint(tenant_b.id, {"url": receiver.url(n, "hang"), "events": ["*"]})
        with write_transaction():
            for n in range(25):
                emit(tenant_b.id, "order.updated", "order", f"ord_b{n}", {"resource": "b", "n": n})
        tenant_a = create_tenant("Bench fast receiver", "enterprise")
        hook = create_endpoint(tenant_a.id, {"url": receiver.url("a0"), "events": ["*"]})
        receiver.secrets["/hooks/a0"] = hook["secret"]
    deadline = time.monotonic() + 30
    while receiver.hanging() < threads - 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    hanging_at_start = receiver.hanging()
    committed = {}
    with db.connection_context():
        started = time.monotonic()
        for n in range(args.fair_events):
            with write_transaction():
                data = {"resource": f"ord_a{n % 10}", "n": n}
                event_id = emit(tenant_a.id, "order.updated", "order", data["resource"], data)
            committed[event_id] = time.time()
            time.sleep(max(0.0, started + (n + 1) / args.fair_rate - time.monotonic()))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with receiver.lock:
            if len(receiver.received) >= args.fair_events:
                break
        time.sleep(0.05)
    with receiver.lock:
        latencies = [
            (at - committed[event_id]) * 1000
            for (path, event_id), at in receiver.received.items()
            if event_id in committed
        ]
        return {
            "received": len(latencies),
            "expected": args.fair_events,
            "p50_ms": percentile(latencies, 50),
            "p99_ms": percentile(latencies, 99),
            "max_ms": max(latencies, default=float("nan")),
            "hanging_at_start": hanging_at_start,
            "b_attempts": receiver.hangs,
            "max_in_flight": max(receiver.max_in_flight.values(), default=0),
            "duplicates": sum(c - 1 for c in receiver.deliveries.values()),
        }


# where the worker's CPU goes: the innermost of these on a sampled stack takes the sample
PROFILE_BUCKETS = (
    ("signing (HMAC, headers)", "delivery_headers ("),
    ("event body (JSON)", "event_body ("),
    ("HTTP send (urllib3, netguard, sockets)", "send (commerce_api/webhooks/sender.py"),
    ("handing claims to sending threads (Slots; mostly the GIL handoff)", "Slots."),
    ("SQLite commit", "Database.commit ("),
    ("fan-out (events -> deliveries)", "fan_out ("),
    ("record outcomes (UPDATEs, attempts)", "DeliveryService._record ("),
    ("claim (due endpoints, UPDATE .. RETURNING, details)", "DeliveryService._claim ("),
    ("delivery loop, other (polls, queue)", "DeliveryService."),
    ("job worker and its heartbeat", "Worker."),
    ("WAL checkpointer", "Checkpointer."),
)


def summarize_profile(path):
    """The worker's CPU samples (py-spy --gil: only the thread holding the GIL) by bucket."""
    buckets, total = collections.Counter(), 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not count.isdigit():
                continue
            total += int(count)
            label = "other"
            for frame in reversed(stack.split(";")):
                label = next((name for name, mark in PROFILE_BUCKETS if mark in frame), None)
                if label:
                    break
            buckets[label or "other"] += int(count)
    print(f"profile: {total} samples of the worker holding the GIL (py-spy --gil, {path})")
    for name, samples in buckets.most_common():
        print(f"  {100 * samples / max(1, total):5.1f}%  {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--endpoints", default="1,5", help="comma list of endpoint counts")
    parser.add_argument("--resources", type=int, default=100)
    parser.add_argument("--per-commit", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=None, help="WEBHOOK_SEND_CONCURRENCY")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per case at most")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--fair-events", type=int, default=200, help="tenant A's events")
    parser.add_argument("--fair-rate", type=float, default=20.0, help="A's events per second")
    parser.add_argument("--no-fair", action="store_true", help="skip the two-tenant case")
    parser.add_argument("--profile", default=None, help="py-spy raw output file (worker)")
    args = parser.parse_args()

    os.environ["COMMERCE_WEBHOOK_ALLOW_PRIVATE_TARGETS"] = "1"  # the receiver is loopback
    with temp_directory() as tmp:
        database_url = args.database_url or sqlite_url(os.path.join(tmp, "bench.db"))
        init_db(database_url)
        bind_database(database_url)
        config = {
            "WEBHOOK_ALLOW_PRIVATE_TARGETS": 1,
            "WEBHOOK_TIMEOUT_SECONDS": TIMEOUT_SECONDS,
            "WEBHOOK_RETRY_SCHEDULE": "1,1,1,1,1,1,1,1,1,1",  # B's hanging deliveries stay due
        }
        if args.concurrency:
            config["WEBHOOK_SEND_CONCURRENCY"] = args.concurrency
        threads = args.concurrency or 8
        receiver = Receiver()
        worker = subprocess.Popen(
            [sys.executable, "-m", "commerce_api.cli", "worker", "--concurrency", "1"],
            env=child_env(database_url, **config),
            start_new_session=True,
        )
        results, fair, profiler = [], None, None
        try:
            time.sleep(2.0)  # the worker is up and idle
            if args.profile and shutil.which("py-spy"):
                profiler = subprocess.Popen(
                    ["py-spy", "record", "--pid", str(worker.pid), "--format", "raw",
                     "--output", args.profile, "--rate", "200", "--gil"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                time.sleep(1.0)
            for endpoints in [int(n) for n in args.endpoints.split(",")]:
                results.append(run_case(args, receiver, endpoints, worker.pid))
            if profiler is not None:
                profiler.send_signal(2)  # SIGINT: py-spy writes its output and exits
                profiler.wait(30)
            if not args.no_fair:
                fair = run_two_tenants(args, receiver, threads)
        finally:
            stop_process(worker)
            receiver.close()

    engine = "postgresql" if database_url.startswith("postgres") else "sqlite"
    print(f"webhooks bench: {args.events} events over {args.resources} resources, "
          f"{args.per_commit} per commit, {engine}, one worker process; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'endpoints':>9} {'deliveries':>10} {'per s':>7} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'dupl.':>5} {'order':>5} {'bad sig':>7} {'recorded':>8} {'worker CPU ms':>13} "
          f"{'receiver+producer CPU ms':>24} {'in flight':>9}")  # fmt: skip
    ok = True
    for r in results:
        print(f"{r['endpoints']:>9} {r['deliveries']:>10} {r['per_second']:>7.0f} "
              f"{r['p50_ms']:>8.0f} {r['p99_ms']:>8.0f} {r['duplicates']:>5} "
              f"{r['out_of_order']:>5} {r['bad_signatures']:>7} {r['recorded']:>8} "
              f"{r['worker_cpu_ms']:>13.2f} {r['bench_cpu_ms']:>24.2f} "
              f"{r['max_in_flight']:>9}")  # fmt: skip
        ok = ok and (
            r["per_second"] >= BAR_PER_SECOND
            and r["deliveries"] == r["expected"] == r["recorded"]
            and r["duplicates"] == 0
            and r["out_of_order"] == 0
            and r["bad_signatures"] == 0
            and r["max_in_flight"] <= 2
        )
    medians = statistics.median(r["per_second"] for r in results) if results else 0
    best = max((r["per_second"] for r in results), default=0)
    print(f"bar: >= {BAR_PER_SECOND}/s, 0 duplicates, 0 out of order: "
          f"{'PASS' if ok else 'FAIL'} (median {medians:.0f}/s); goal {GOAL_PER_SECOND:,}/s: "
          f"{'reached' if best >= GOAL_PER_SECOND else 'not reached'}")  # fmt: skip
    if fair is not None:
        print(f"two tenants: B's 20 endpoints hang (time-out {TIMEOUT_SECONDS:g} s, "
              f"{fair['hanging_at_start']} of {threads} threads held when A began, "
              f"{fair['b_attempts']} attempts of B in all); A wrote {fair['expected']} events "
              f"at {args.fair_rate:g}/s to one endpoint")  # fmt: skip
        print(f"  A received {fair['received']}/{fair['expected']}: p50 {fair['p50_ms']:.0f} ms,"
              f" p99 {fair['p99_ms']:.0f} ms, max {fair['max_ms']:.0f} ms; duplicates "
              f"{fair['duplicates']}; most sends in flight to one endpoint: "
              f"{fair['max_in_flight']}")  # fmt: skip
        fair_ok = (
            fair["received"] == fair["expected"]
            and fair["max_ms"] < TIMEOUT_SECONDS * 1000
            and fair["max_in_flight"] <= 2
        )
        print(f"bar: A's slowest within one time-out ({TIMEOUT_SECONDS:g} s), at most 2 sends "
              f"in flight per endpoint: {'PASS' if fair_ok else 'FAIL'}")  # fmt: skip
        ok = ok and fair_ok
    if args.profile and os.path.exists(args.profile):
        summarize_profile(args.profile)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
