"""Shared benchmark helpers: a temp SQLite database with the real schema, fast seeding,
gunicorn servers on 127.0.0.1, and a load generator (wrk when installed, else Python).

Everything here targets 127.0.0.1 only, bounds every loop with a deadline, and cleans up
its processes and files (use the context managers).
"""

import contextlib
import json
import math
import multiprocessing
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from http.client import HTTPConnection

import peewee

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
HOST = "127.0.0.1"

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


# --- database ------------------------------------------------------------------------


@contextlib.contextmanager
def temp_directory(prefix="commerce-bench-"):
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sqlite_url(path):
    return f"sqlite:///{os.path.abspath(path)}"


def child_env(database_url, **config):
    """Environment for a child process: the database and ``COMMERCE_*`` settings."""
    env = dict(os.environ)
    env["COMMERCE_DATABASE_URL"] = database_url
    env["COMMERCE_LOG_LEVEL"] = "WARNING"
    for key, value in config.items():
        env[f"COMMERCE_{key}"] = str(value)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def init_db(database_url, timeout=120):
    """Create the schema exactly as an operator does: ``commerce-api init-db``."""
    subprocess.run(
        [sys.executable, "-m", "commerce_api.cli", "init-db"],
        cwd=ROOT,
        env=child_env(database_url),
        check=True,
        timeout=timeout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def bind_database(database_url):
    """Bind the app's database proxy in this process (for seeding through the models)."""
    from commerce_api.db import init_database

    return init_database(database_url)


def create_tenant_and_key(plan="enterprise", rate_limit=None):
    """A tenant and an all-scopes API key; ``rate_limit`` sets the per-key override
    (per minute and per hour; enterprise only). Returns ``(tenant_id, key_secret)``."""
    from commerce_api.auth.models import SCOPES
    from commerce_api.auth.services import create_key, create_tenant
    from commerce_api.db import db

    with db.connection_context():
        tenant = create_tenant("Benchmark tenant", plan)
        _, secret = create_key(
            tenant.id,
            "benchmark key",
            list(SCOPES),
            rate_limit_per_minute=rate_limit,
            rate_limit_per_hour=rate_limit,
        )
    return tenant.id, secret


_ADJECTIVES = (
    "Classic", "Enamel", "Organic", "Vintage", "Compact", "Deluxe", "Rugged", "Slim",
    "Bamboo", "Ceramic", "Wireless", "Insulated", "Foldable", "Handmade", "Premium",
)  # fmt: skip
_NOUNS = (
    "Mug", "Tee", "Cap", "Backpack", "Bottle", "Notebook", "Lamp", "Charger", "Blanket",
    "Kettle", "Sneaker", "Wallet", "Headphones", "Planter", "Candle", "Jacket",
)  # fmt: skip
_COLOURS = ("Black", "White", "Red", "Navy", "Olive", "Sand", "Grey", "Teal", "Rust")
_SIZES = ("XS", "S", "M", "L", "XL", "350ml", "500ml", "1L", "One size")
_MARKETPLACES = ("amazon", "ebay", "etsy", "walmart")
# mostly active; archived rows are excluded from the default list, as in real catalogs
_STATUSES = ("active",) * 80 + ("inactive",) * 8 + ("draft",) * 7 + ("archived",) * 5


def _gtin13(rng):
    digits = [rng.randrange(10) for _ in range(12)]
    total = sum(d * (3 if i % 2 else 1) for i, d in enumerate(digits))
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


def seed_products(tenant_id, count=100_000, seed=42, listings=True):
    """Insert ``count`` varied products (and 0-2 listings each) in one transaction.

    The rows go into the tables ``commerce-api init-db`` created, with one ``executemany``
    per table; JSON and decimal values go through their field's own ``db_value``. The
    non-unique indexes are dropped for the load and re-created from their own stored SQL
    in the same transaction (faster than maintaining them row by row). ``created_at``
    values are spread over two years, in bursts that share a millisecond (so the id
    tie-break matters). Returns the skus.
    """
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.products.models import Listing, Product

    rng = random.Random(seed)
    now = int(time.time() * 1000)
    start = now - 2 * 365 * 86_400_000
    skus = []
    products, listing_rows = [], []
    created = start
    for i in range(count):
        noun = rng.choice(_NOUNS)
        sku = f"{noun[:3].upper()}-{rng.choice(_COLOURS)[:3].upper()}-{i:06d}"
        skus.append(sku)
        if i % 4 == 0:
            created = rng.randrange(start, now)  # a new burst
        else:
            created += rng.choice((0, 0, 1, 7, 250, 60_000))
        updated = created + rng.randrange(0, 30 * 86_400_000)
        product_id = new_id("product")
        products.append(
            {
                "id": product_id,
                "tenant": tenant_id,
                "sku": sku,
                "title": f"{rng.choice(_ADJECTIVES)} {noun} {rng.choice(_COLOURS)} "
                f"{rng.choice(_SIZES)}",
                "description": f"{noun} number {i}, benchmark data.",
                "status": rng.choice(_STATUSES),
                "gtin": _gtin13(rng) if rng.random() < 0.7 else None,
                "category": noun.lower(),
                "cost_price": f"{rng.randrange(100, 20_000) / 100:.2f}",
                "weight_kg": f"{rng.randrange(10, 5_000) / 1000:.3f}",
                "images": [f"https://img.example.com/{sku}/{n}.jpg" for n in range(i % 4)],
                "created_at": created,
                "updated_at": updated,
            }
        )
        if listings:
            for marketplace in rng.sample(_MARKETPLACES, i % 3):
                listing_rows.append(
                    {
                        "id": new_id("listing"),
                        "tenant": tenant_id,
                        "product": product_id,
                        "marketplace": marketplace,
                        "external_id": f"{marketplace.upper()}-{rng.randrange(10**9)}",
                        "price": f"{rng.randrange(500, 40_000) / 100:.2f}",
                        "currency": "USD",
                        "quantity": rng.randrange(0, 500),
                        "status": "active",
                        "last_synced_at": updated,
                        "created_at": created,
                        "updated_at": updated,
                    }
                )
    assert len(set(skus)) == len(skus)
    with db.connection_context(), db.atomic():
        _insert_many(db, Product, products)
        if listing_rows:
            _insert_many(db, Listing, listing_rows)
    return skus


def _insert_many(db, model, rows):
    from commerce_api.db import JSONField

    table = model._meta.table_name
    fields = model._meta.sorted_fields
    convert = [
        f.db_value if isinstance(f, JSONField | peewee.DecimalField) else None for f in fields
    ]
    # a column the rows do not name gets its field's default (as create() would)
    defaults = [f.default() if callable(f.default) else f.default for f in fields]
    params = [
        tuple(
            row.get(f.name, default) if conv is None else conv(row.get(f.name, default))
            for f, conv, default in zip(fields, convert, defaults, strict=True)
        )
        for row in rows
    ]
    columns = ", ".join(f'"{f.column_name}"' for f in fields)
    marks = ", ".join("?" for _ in fields)
    indexes = db.execute_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?"
        " AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'",
        (table,),
    ).fetchall()
    for name, _ in indexes:
        db.execute_sql(f'DROP INDEX "{name}"')
    db.connection().executemany(f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', params)
    for _, sql in indexes:
        db.execute_sql(sql)


# --- servers ---------------------------------------------------------------------------


def free_port():
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def stop_process(proc, timeout=10):
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)


def wait_until_up(base, path, proc, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(base + path, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"server at {base} did not answer {path} in {timeout}s")
        time.sleep(0.1)


def worker_class():
    """(class, threads) of the benchmarked servers: BENCH_WORKER_CLASS (sync, or gthread
    with BENCH_THREADS threads, 4 by default, as ``commerce-api serve`` runs);
    ``run.py --worker-class`` sets them. Sync is the default: gthread's keep-alive
    connections spread unevenly over the two processes, which makes short slices noisy."""
    name = os.environ.get("BENCH_WORKER_CLASS") or "sync"
    threads = int(os.environ.get("BENCH_THREADS") or 4) if name == "gthread" else 1
    return name, threads


@contextlib.contextmanager
def gunicorn(app_spec, env, workers=2, health_path="/api/health", chdir=ROOT):
    """Run ``gunicorn <app_spec>`` (``worker_class()``) on a free 127.0.0.1 port; yields
    the base URL."""
    port = free_port()
    name, threads = worker_class()
    cmd = [
        sys.executable, "-m", "gunicorn",
        "--workers", str(workers),
        "--worker-class", name,
        "--threads", str(threads),
        "--bind", f"{HOST}:{port}",
        "--timeout", "60",
        "--log-level", "warning",
        "--chdir", chdir,
        app_spec,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=chdir, env=env, start_new_session=True)
    base = f"http://{HOST}:{port}"
    try:
        wait_until_up(base, health_path, proc)
        yield base
    finally:
        stop_process(proc)


def http_get_json(base, path, headers=None, timeout=10):
    request = urllib.request.Request(base + path, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, json.loads(response.read())


# --- load generation -------------------------------------------------------------------


def wrk_path():
    return shutil.which("wrk")


_LUA = """
local headers = %(headers)s
for k, v in pairs(headers) do wrk.headers[k] = v end
local paths = %(paths)s
local n = #paths
local counter = 0
if n > 1 then
  request = function()
    counter = counter + 1
    return wrk.format("GET", paths[(counter %% n) + 1])
  end
end
done = function(summary, latency, requests)
  local s = summary
  io.write(string.format(
    "WRKJSON {\\"requests\\":%%d,\\"duration_us\\":%%d,\\"p50_us\\":%%d,\\"p99_us\\":%%d," ..
    "\\"status_errors\\":%%d,\\"connect_errors\\":%%d,\\"read_errors\\":%%d," ..
    "\\"write_errors\\":%%d,\\"timeouts\\":%%d}\\n",
    s.requests, s.duration, latency:percentile(50), latency:percentile(99),
    s.errors.status, s.errors.connect, s.errors.read, s.errors.write, s.errors.timeout))
end
"""


def _lua_string(value):
    return json.dumps(value)  # a JSON string literal is a valid Lua string literal here


def _lua_table(items):
    if isinstance(items, dict):
        body = ", ".join(f"[{_lua_string(k)}] = {_lua_string(v)}" for k, v in items.items())
    else:
        body = ", ".join(_lua_string(v) for v in items)
    return "{" + body + "}"


def run_wrk(base, paths, headers=None, duration=8, threads=2, connections=16, workdir=None):
    """Drive ``base`` with wrk; ``paths`` (one or many, used round-robin per thread).

    Returns ``{rps, p50_ms, p99_ms, requests, errors}``.
    """
    assert base.startswith(f"http://{HOST}:")
    paths = [paths] if isinstance(paths, str) else list(paths)
    script_dir = workdir or tempfile.mkdtemp(prefix="commerce-wrk-")
    script = os.path.join(script_dir, f"wrk-{uuid.uuid4().hex[:8]}.lua")
    with open(script, "w") as fh:
        fh.write(_LUA % {"headers": _lua_table(headers or {}), "paths": _lua_table(paths)})
    try:
        proc = subprocess.run(
            [
                wrk_path(),
                f"-t{threads}",
                f"-c{connections}",
                f"-d{max(1, round(duration))}s",
                "--timeout",
                "5s",
                "-s",
                script,
                base + paths[0],
            ],
            capture_output=True,
            text=True,
            timeout=duration + 30,
        )
    finally:
        os.unlink(script)
        if workdir is None:
            shutil.rmtree(script_dir, ignore_errors=True)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("WRKJSON ")), None)
    if proc.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({proc.returncode}): {proc.stdout}\n{proc.stderr}")
    data = json.loads(line[len("WRKJSON ") :])
    seconds = data["duration_us"] / 1e6
    errors = sum(
        data[k]
        for k in ("status_errors", "connect_errors", "read_errors", "write_errors", "timeouts")
    )
    return {
        "rps": data["requests"] / seconds if seconds else 0.0,
        "p50_ms": data["p50_us"] / 1000,
        "p99_ms": data["p99_us"] / 1000,
        "requests": data["requests"],
        "seconds": seconds,
        "errors": errors,
    }


def _py_client_worker(base, paths, headers, deadline, connections, offset, queue):
    """One process: ``connections`` threads, each with one persistent HTTPConnection."""
    port = int(base.rsplit(":", 1)[1])
    results = []
    lock = threading.Lock()

    def loop(index):
        latencies, errors = [], 0
        conn = HTTPConnection(HOST, port, timeout=5)
        i = offset + index
        while time.monotonic() < deadline:
            path = paths[i % len(paths)]
            i += 1
            started = time.perf_counter()
            try:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
                response.read()  # http.client reopens by itself after "Connection: close"
                ok = 200 <= response.status < 400
            except OSError:
                conn.close()
                ok = False
            latencies.append(time.perf_counter() - started)
            errors += not ok
        conn.close()
        with lock:
            results.append((latencies, errors))

    threads = [threading.Thread(target=loop, args=(n,)) for n in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies = [x for lat, _ in results for x in lat]
    queue.put((latencies, sum(e for _, e in results)))


def run_python_client(base, paths, headers=None, duration=8, processes=4, connections=16):
    """A keep-alive Python client: ``processes`` processes x threads, ``connections`` in all."""
    assert base.startswith(f"http://{HOST}:")
    paths = [paths] if isinstance(paths, str) else list(paths)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    per_process = max(1, connections // processes)
    started = time.monotonic()
    deadline = started + duration
    procs = [
        ctx.Process(
            target=_py_client_worker,
            args=(base, paths, headers or {}, deadline, per_process, n * 7919, queue),
        )
        for n in range(processes)
    ]
    for proc in procs:
        proc.start()
    collected = []
    try:
        for _ in procs:
            collected.append(queue.get(timeout=duration + 30))
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join()
    elapsed = max(time.monotonic() - started, 1e-9)
    latencies = sorted(x for lat, _ in collected for x in lat)
    errors = sum(e for _, e in collected)
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": _percentile(latencies, 50) * 1000,
        "p99_ms": _percentile(latencies, 99) * 1000,
        "requests": len(latencies),
        "seconds": elapsed,
        "errors": errors,
        "latencies": latencies,
    }


def _percentile(ordered, p):
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


def combine(results):
    """One figure from several rounds of a case: req/s over the summed time; percentiles
    exact from the raw latencies (Python client), else the median of the rounds' own."""
    requests = sum(r["requests"] for r in results)
    seconds = sum(r["seconds"] for r in results)
    combined = {
        "rps": requests / seconds if seconds else 0.0,
        "requests": requests,
        "seconds": seconds,
        "errors": sum(r["errors"] for r in results),
        "rounds_rps": [r["rps"] for r in results],
    }
    if all("latencies" in r for r in results):
        latencies = sorted(x for r in results for x in r["latencies"])
        combined["p50_ms"] = _percentile(latencies, 50) * 1000
        combined["p99_ms"] = _percentile(latencies, 99) * 1000
    else:
        combined["p50_ms"] = statistics.median(r["p50_ms"] for r in results)
        combined["p99_ms"] = statistics.median(r["p99_ms"] for r in results)
    return combined


def load(base, paths, headers=None, duration=8, client="auto", connections=16):
    """Run one load case with wrk (``client='wrk'`` or auto when installed) or Python."""
    if client == "auto":
        client = "wrk" if wrk_path() else "python"
    if client == "wrk":
        return run_wrk(base, paths, headers, duration=duration, connections=connections)
    return run_python_client(base, paths, headers, duration=duration, connections=connections)
