"""Imports and exports (issue 35): ``.venv/bin/python bench/files.py``.

On a temp SQLite database (or ``--database-url``), as a merchant would:

  products   a ``--rows``-row products CSV (default 50,000) uploaded through the API (the
             app in this process, its test client: the upload is the same code gunicorn
             runs), then ``commerce-api worker --once`` in a child process runs the import
             job: seconds from the worker's start to its end, rows/s, and the worker's peak
             resident memory (``ru_maxrss`` of the child)
  inventory  the same for a ``--rows``-row stock-levels CSV over those products (one own
             warehouse), then three more with new levels, so that the ledger holds
             4 x ``--rows`` adjustments
  again      the products file imported a second time: every row unchanged
  export     ``GET /api/exports/adjustments.csv`` streamed and read in chunks: rows/s and
             the peak of Python allocations while streaming (tracemalloc), which stays flat
             however many rows there are

Bars (issue 35): each import <= 60 s on SQLite, the worker's peak < 200 MB; exit status 1
when a bar fails or a row is not applied.
"""

import argparse
import io
import os
import resource
import subprocess
import sys
import time
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402

IMPORT_BAR_SECONDS = 60.0
MEMORY_BAR_MB = 200.0


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50_000, help="rows per file (50,000)")
    parser.add_argument("--database-url", help="a PostgreSQL URL (default: temp SQLite)")
    return parser.parse_args(argv)


def products_csv(rows):
    lines = ["sku,title,status,category,cost_price,weight_kg,images"]
    for n in range(rows):
        lines.append(
            f"BENCH-{n:06d},Enamel mug {n} blue,active,mugs,{3 + n % 500 / 100:.2f},0.350,"
            f"https://img.example.com/{n}.jpg"
        )
    return ("\r\n".join(lines) + "\r\n").encode()


def inventory_csv(rows, warehouse_id, base):
    lines = ["sku,warehouse_id,quantity,reason"]
    lines += [f"BENCH-{n:06d},{warehouse_id},{base + n % 97},cycle_count" for n in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def upload(client, headers, kind, data):
    answer = client.post(
        "/api/imports",
        headers=headers,
        data={"type": kind, "file": (io.BytesIO(data), f"{kind}.csv")},
        content_type="multipart/form-data",
    )
    if answer.status_code != 202:
        raise RuntimeError(f"upload: {answer.status_code} {answer.get_data()[:300]!r}")
    return answer.get_json()["data"]


def run_worker(database_url):
    """``commerce-api worker --once``: (seconds, the child's peak RSS in MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "commerce_api.cli", "worker", "--once"],
        cwd=common.ROOT,
        env=common.child_env(database_url),
        check=True,
        timeout=1800,
    )
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest child so far: each worker is measured alone
    # as long as it is larger than the ones before (the first one is the init-db child)
    return seconds, max(peak, before) / 1024


def job_result(client, headers, job_id):
    job = client.get(f"/api/ai-jobs/{job_id}", headers=headers).get_json()["data"]
    if job["status"] != "completed":
        raise RuntimeError(f"job {job_id}: {job['status']} {job.get('error')}")
    return job["result"]


def measure_import(client, headers, database_url, kind, data, rows, label):
    summary = upload(client, headers, kind, data)
    seconds, peak = run_worker(database_url)
    result = job_result(client, headers, summary["job_id"])
    applied = result["created"] + result["updated"] + result["unchanged"]
    print(
        f"{label:<10} {rows:>7} rows  {seconds:6.1f} s  {rows / seconds:8.0f} rows/s  "
        f"worker peak {peak:6.1f} MB  created {result['created']} updated {result['updated']} "
        f"unchanged {result['unchanged']} failed {result['failed']}"
    )
    ok = seconds <= IMPORT_BAR_SECONDS and peak < MEMORY_BAR_MB and applied == rows
    return ok, result


def measure_export(client, headers):
    tracemalloc.start()
    started = time.perf_counter()
    answer = client.get("/api/exports/adjustments.csv", headers=headers, buffered=False)
    lines = 0
    for chunk in answer.response:
        lines += chunk.count("\n") if isinstance(chunk, str) else chunk.count(b"\n")
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rows = lines - 1
    print(
        f"export     {rows:>7} rows  {seconds:6.1f} s  {rows / seconds:8.0f} rows/s  "
        f"peak Python allocations while streaming {peak / 1024 / 1024:.1f} MB"
    )
    return rows


def main(argv=None):
    args = parse_args(argv)
    with common.temp_directory() as folder:
        database_url = args.database_url or common.sqlite_url(os.path.join(folder, "bench.db"))
        common.init_db(database_url)
        from commerce_api import create_app
        from commerce_api.inventory.services import create_warehouse

        app = create_app({"DATABASE_URL": database_url, "RATE_LIMIT_ENABLED": False})
        from commerce_api.db import db

        with app.app_context(), db.connection_context():
            tenant_id, secret = common.create_tenant_and_key()
            warehouse = create_warehouse(tenant_id, {"name": "Main", "type": "own"})["id"]
        db.close()
        client = app.test_client()
        headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant_id}
        print(f"database: {database_url.split('://')[0]}; {args.rows} rows per file")
        products = products_csv(args.rows)
        ok, _ = measure_import(
            client, headers, database_url, "products", products, args.rows, "products"
        )
        for round_ in range(4):
            data = inventory_csv(args.rows, warehouse, 10 + round_ * 100)
            label = "inventory" if round_ == 0 else f"levels {round_ + 1}"
            fine, _ = measure_import(
                client, headers, database_url, "inventory", data, args.rows, label
            )
            ok = ok and fine
        fine, result = measure_import(
            client, headers, database_url, "products", products, args.rows, "again"
        )
        ok = ok and fine and result["unchanged"] == args.rows
        exported = measure_export(client, headers)
        ok = ok and exported == 4 * args.rows
        print("bars: import <= 60 s, worker < 200 MB:", "met" if ok else "NOT met")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
