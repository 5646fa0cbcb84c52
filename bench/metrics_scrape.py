"""What one ``/metrics`` scrape costs with many finished jobs (issue 30), run by hand:
``.venv/bin/python bench/metrics_scrape.py [--jobs 200000] [--tenants 100]``.

``commerce_jobs`` shows every status by type. Finished jobs come from the counts the job
table's triggers keep (migration 0085), so the scrape reads a few rows per tenant, never
the job table; the live ones from the queue's partial indexes. For comparison, the same
numbers by a ``GROUP BY`` over the job table, what a scrape would cost without the counts.
SQLite (a temporary file).
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

FOLDER = tempfile.mkdtemp(prefix="commerce-bench-scrape-")
METRICS = os.path.join(FOLDER, "metrics")  # prometheus_client reads every *.db file there
os.makedirs(METRICS)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = METRICS  # before prometheus_client is imported
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from commerce_api import create_app  # noqa: E402
from commerce_api.db import db  # noqa: E402
from commerce_api.migrations import upgrade  # noqa: E402

TYPES = (
    "pricing_recalculate",
    "review_sentiment",
    "return_classify",
    "llm_visibility_score",
    "competitor_scan",
    "listing_optimize",
)
FINISHED = ("completed", "completed", "completed", "failed", "cancelled")


def seed(jobs, tenants):
    rng = random.Random(30)
    now = int(time.time() * 1000)
    tenant_ids = [f"00000000-0000-4000-8000-{n:012d}" for n in range(tenants)]
    with db.atomic():
        db.execute_sql(
            "INSERT INTO tenant (id, name, plan, auth_version, created_at) VALUES "
            + ", ".join("(?, 'T', 'growth', 0, ?)" for _ in tenant_ids),
            [v for t in tenant_ids for v in (t, now)],
        )
    rows = [
        (f"job_{n:09d}", rng.choice(tenant_ids), rng.choice(TYPES), now - n) for n in range(jobs)
    ]
    with db.atomic():
        db.execute_sql("PRAGMA foreign_keys = OFF")
        db.obj.cursor().executemany(
            "INSERT INTO job (id, tenant_id, type, internal, status, priority, priority_rank,"
            " attempts, max_attempts, timeout_seconds, created_at, updated_at, run_at,"
            " claim_key, batch_sequential, params)"
            " VALUES (?, ?, ?, 0, 'queued', 'normal', 1, 0, 4, 600, ?, 0, 0, 0, 0, '{}')",
            [(i, t, ty, c) for i, t, ty, c in rows],
        )
    # every job finishes as the worker finishes it: an UPDATE (the triggers count it)
    with db.atomic():
        db.obj.cursor().executemany(
            "UPDATE job SET status = ?, completed_at = ? WHERE id = ?",
            [(rng.choice(FINISHED), now, i) for i, *_ in rows if rng.random() < 0.98],
        )


def timed(fn, rounds):
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), max(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=200_000)
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    config = {
        "DATABASE_URL": f"sqlite:///{FOLDER}/bench.db",
        "RATE_LIMIT_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "METRICS_ENABLED": True,
    }
    app = create_app(config)
    with db.connection_context():
        upgrade(db.obj)
        started = time.perf_counter()
        seed(args.jobs, args.tenants)
        took = time.perf_counter() - started
        print(f"seeded {args.jobs} jobs of {args.tenants} tenants in {took:.1f} s")
    client = app.test_client()
    text = client.get("/metrics").get_data(as_text=True)
    shown = [line for line in text.splitlines() if line.startswith("commerce_jobs{")]
    total = sum(float(line.rsplit(" ", 1)[1]) for line in shown)
    print(f"commerce_jobs: {len(shown)} series, {total:.0f} jobs in all")
    median, worst = timed(lambda: client.get("/metrics"), args.rounds)
    print(f"scrape (whole /metrics): median {median:.1f} ms, max {worst:.1f} ms")
    with db.connection_context():
        median, worst = timed(
            lambda: db.execute_sql(
                "SELECT type, status, COUNT(*) FROM job GROUP BY type, status"
            ).fetchall(),
            args.rounds,
        )
    print(
        f"the same numbers by a scan of the job table: median {median:.1f} ms, max {worst:.1f} ms"
    )


if __name__ == "__main__":
    main()
