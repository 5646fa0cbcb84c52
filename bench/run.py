"""The hot-path benchmark (issue 2): ``make bench`` or ``.venv/bin/python bench/run.py``.

Starts the real server (gunicorn, 2 sync workers; ``--worker-class gthread`` for 4 threads
each, as ``commerce-api serve`` runs it) on a temp SQLite database seeded with
100,000 products in one tenant, plus two reference apps under the same gunicorn settings,
drives each over 127.0.0.1 with keep-alive clients (wrk when installed) for a bounded time,
and prints req/s and p50/p99 latency per case with the two ratios the bar is set on:

  (a) GET /api/health                      (d) the same list 1,500 pages deep (cursor)
  (b) GET /api/products/:sku with a key    (e) a bare WSGI app, fixed JSON, no Flask
  (c) GET /api/products?limit=50           (f) bare Flask + stdlib sqlite3, same lookup

  (b)/(f) = req/s of (b) over req/s of (f); bar: at least 0.5
  (d)/(c) = time per request of (d) over (c); bar: at most 1.3

The cases take turns in rounds (default 4 x 2 s each), so that a burst of other load on
the machine falls on every case alike; a ratio is the median of its per-round ratios (the
ratio of the totals is printed beside it). The deep cursor is obtained by walking the pages
with the app's own list code in this process (checked against the server's cursors), or
through the server with ``--walk-api``.

Rate limiting is OFF unless ``--rate-limit`` (or BENCH_RATE_LIMIT=1) is given; then the key
belongs to an enterprise tenant with a per-key override of 10,000,000 per minute and hour,
and a second API server with rate limiting off runs on the same database: (a) to (d) are
measured on both in the same rounds and printed side by side, with the bars of issue 14:

  (b)/(f) with rate limiting on: at least 0.6
  (c) with rate limiting on over (c) with it off (the first list page): at least 0.8
  (d)/(c) with rate limiting on: at most 1.2

Exit status 1 when a bar fails or a case saw errors.
"""

import argparse
import contextlib
import http.client
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import time
from http.client import HTTPConnection
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402

RATE_LIMIT_OVERRIDE = 10_000_000


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rate-limit",
        action="store_true",
        default=os.environ.get("BENCH_RATE_LIMIT", "") in ("1", "true", "yes"),
        help="run with COMMERCE_RATE_LIMIT_ENABLED=1 (default: off)",
    )
    parser.add_argument(
        "--worker-class",
        choices=("sync", "gthread"),
        default=os.environ.get("BENCH_WORKER_CLASS") or "sync",
        help="gunicorn worker class of every app (sync; gthread runs --threads threads, as "
        "commerce-api serve does, but its keep-alive connections spread unevenly over the "
        "processes, so short slices are noisy)",
    )
    parser.add_argument("--threads", type=int, default=int(os.environ.get("BENCH_THREADS") or 4))
    parser.add_argument("--duration", type=int, default=8, help="seconds per case (8)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="the cases take turns in this many rounds (4), so that a burst of other load "
        "on the machine hits every case alike",
    )
    parser.add_argument("--warmup", type=int, default=1, help="warm-up seconds per case (1)")
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=1500, help="cursor depth of case (d)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--client", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument(
        "--walk-api",
        action="store_true",
        help="walk the pages to the deep cursor through the server (default: through the "
        "same list code in this process, checked against the server's own cursors)",
    )
    return parser.parse_args(argv)


def wrk_version():
    try:
        out = subprocess.run([common.wrk_path(), "-v"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "wrk"
    first = (out.stdout or out.stderr).splitlines()[:1]
    return first[0].split(" [")[0] if first else "wrk"


class Api:
    """A keep-alive client for the sanity checks and the cursor walk."""

    def __init__(self, base, headers):
        self.port = int(base.rsplit(":", 1)[1])
        self.headers = headers
        self.conn = HTTPConnection(common.HOST, self.port, timeout=10)

    def get(self, path):
        try:
            self.conn.request("GET", path, headers=self.headers)
            response = self.conn.getresponse()
        except (ConnectionError, http.client.HTTPException):
            # a keep-alive connection the server closed while idle (gthread): once more
            self.conn.close()
            self.conn.request("GET", path, headers=self.headers)
            response = self.conn.getresponse()
        body = response.read()
        return response.status, dict(response.getheaders()), json.loads(body)

    def close(self):
        self.conn.close()


def list_path(cursor=None):
    path = "/api/products?limit=50"
    return path + f"&cursor={quote(cursor)}" if cursor else path


def first_id_of_page(tenant_id, page):
    """The id that starts page ``page`` of the default list, by OFFSET (the slow way)."""
    from commerce_api.db import db

    with db.connection_context():
        return db.execute_sql(
            "SELECT id FROM product WHERE tenant_id = ? AND status != 'archived'"
            " ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?",
            (tenant_id, (page - 1) * 50),
        ).fetchone()[0]


def walk_in_process(tenant_id, pages):
    """Walk the default list to page ``pages`` through the app's own list code, in this
    process; returns ``{page: cursor leading to it}`` for pages 2 and ``pages``."""
    from commerce_api.db import db
    from commerce_api.products import services
    from commerce_api.products.schemas import ProductListArgsSchema

    schema = ProductListArgsSchema()
    cursors, cursor = {}, None
    with db.connection_context():
        for page in range(1, pages):
            query = {"limit": "50", "cursor": cursor} if cursor else {"limit": "50"}
            _, meta = services.list_products(tenant_id, schema.load(query))
            cursor = meta["nextCursor"]
            if page + 1 in (2, pages):
                cursors[page + 1] = cursor
    return cursors


def check_deep_cursor(api, tenant_id, pages, walk_api):
    """Return the cursor of page ``pages`` and a note on how it was obtained and checked."""
    status, _, first = api.get(list_path())
    assert status == 200 and len(first["data"]) == 50, (status, first.get("meta"))
    started = time.monotonic()
    if walk_api:
        cursor = first["meta"]["nextCursor"]
        for _ in range(pages - 2):
            status, _, body = api.get(list_path(cursor))
            assert status == 200, body
            cursor = body["meta"]["nextCursor"]
        note = f"walked {pages - 1} pages through the API in {time.monotonic() - started:.1f} s"
    else:
        cursors = walk_in_process(tenant_id, pages)
        # the same code in this process must issue exactly the server's cursors
        assert cursors[2] == first["meta"]["nextCursor"], "in-process cursor differs from API's"
        cursor = cursors[pages]
        note = (
            f"walked {pages - 1} pages in-process through products.services.list_products in "
            f"{time.monotonic() - started:.1f} s (its page-2 cursor is the server's, byte for byte)"
        )
    status, _, body = api.get(list_path(cursor))
    assert status == 200, body
    assert body["meta"]["page"] == pages, body["meta"]
    assert len(body["data"]) == 50, body["meta"]
    assert body["data"][0]["id"] == first_id_of_page(tenant_id, pages), "deep page is wrong"
    assert body["meta"]["total"] == first["meta"]["total"]
    return cursor, note


def main(argv=None):
    args = parse_args(argv)
    os.environ["BENCH_WORKER_CLASS"] = args.worker_class
    os.environ["BENCH_THREADS"] = str(args.threads)
    client = args.client
    if client == "auto":
        client = "wrk" if common.wrk_path() else "python"
    if client == "wrk" and not common.wrk_path():
        sys.exit("wrk is not installed (apt-get install -y wrk), use --client python")
    if client == "wrk":
        load_desc = f"{wrk_version()}, -t2 -c{args.connections}, Lua script (headers, paths)"
    else:
        load_desc = f"Python http.client keep-alive client, 4 processes, {args.connections} conns"
    rate_limit = args.rate_limit
    has_ratelimit_module = importlib.util.find_spec("commerce_api.http.ratelimit") is not None

    t0 = time.monotonic()
    with common.temp_directory() as tmp:
        db_path = os.path.join(tmp, "bench.db")
        url = common.sqlite_url(db_path)
        common.init_db(url)
        common.bind_database(url)
        tenant_id, secret = common.create_tenant_and_key("enterprise", RATE_LIMIT_OVERRIDE)
        seed_started = time.monotonic()
        skus = common.seed_products(tenant_id, args.products)
        seed_seconds = time.monotonic() - seed_started
        from commerce_api.db import db

        with db.connection_context():
            listing_count = db.execute_sql("SELECT COUNT(*) FROM listing").fetchone()[0]
        headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant_id}
        sample = random.Random(7).sample(skus, min(1000, len(skus)))
        sku_paths = [f"/api/products/{quote(s)}" for s in sample]

        ref_env = dict(os.environ, BENCH_DB_PATH=db_path)
        with contextlib.ExitStack() as stack:
            # with --rate-limit, a second API server on the same database with rate limiting
            # off: the two configurations side by side, in the same rounds
            servers = {"": common.child_env(url, RATE_LIMIT_ENABLED=1 if rate_limit else 0)}
            if rate_limit:
                servers["0"] = common.child_env(url, RATE_LIMIT_ENABLED=0)
            bases = {
                suffix: stack.enter_context(common.gunicorn("wsgi:app", env))
                for suffix, env in servers.items()
            }
            api_base = bases[""]
            bare_base = stack.enter_context(
                common.gunicorn(
                    "baseline_apps:bare_wsgi", ref_env, health_path="/", chdir=common.BENCH_DIR
                )
            )
            flask_base = stack.enter_context(
                common.gunicorn(
                    "baseline_apps:flask_sqlite",
                    ref_env,
                    health_path="/api/health",
                    chdir=common.BENCH_DIR,
                )
            )
            api = Api(api_base, headers)
            try:
                status, response_headers, body = api.get(sku_paths[0])
                assert status == 200 and body["data"]["sku"] == sample[0], body
                rl_header = "X-RateLimit-Limit" in response_headers
                if rate_limit:
                    unlimited = Api(bases["0"], headers)
                    status, plain_headers, _ = unlimited.get(sku_paths[0])
                    unlimited.close()
                    assert status == 200 and "X-RateLimit-Limit" not in plain_headers
                fapi = Api(flask_base, headers)
                status, _, fbody = fapi.get(sku_paths[0])
                fapi.close()
                assert status == 200 and fbody["data"]["id"] == body["data"]["id"]
                deep_cursor, cursor_note = check_deep_cursor(
                    api, tenant_id, args.pages, args.walk_api
                )
            finally:
                api.close()
            deep_path = list_path(deep_cursor)

            cases = [
                ("e", "bare WSGI app, fixed JSON (no Flask)", bare_base, ["/"], None),
                ("f", "bare Flask + sqlite3, product by sku", flask_base, sku_paths, headers),
            ]
            for suffix, base in bases.items():
                cases += [
                    ("a" + suffix, "GET /api/health", base, ["/api/health"], None),
                    ("b" + suffix, "GET /api/products/:sku (API key)", base, sku_paths, headers),
                    ("c" + suffix, "GET /api/products?limit=50", base, [list_path()], headers),
                    (
                        "d" + suffix,
                        f"same list, page {args.pages} (cursor)",
                        base,
                        [deep_path],
                        headers,
                    ),
                ]
            # each round: the references, then every API case with and without the limit
            # one after the other, so a burst of other load falls on both alike
            cases.sort(key=lambda case: (case[0][0] not in "ef", case[0][0], case[0]))
            if args.warmup > 0:
                for _, _, base, paths, hdrs in cases:
                    common.load(base, paths, hdrs, args.warmup, client, args.connections)
            slice_seconds = max(1, round(args.duration / args.rounds))
            rounds = {letter: [] for letter, *_ in cases}
            for _ in range(args.rounds):
                for letter, _, base, paths, hdrs in cases:
                    rounds[letter].append(
                        common.load(base, paths, hdrs, slice_seconds, client, args.connections)
                    )
            results = {letter: common.combine(rs) for letter, rs in rounds.items()}
        total_seconds = time.monotonic() - t0

    if rate_limit and has_ratelimit_module:
        rl_state = "ON (COMMERCE_RATE_LIMIT_ENABLED=1"
        rl_state += ", X-RateLimit-* headers seen)" if rl_header else ", NO X-RateLimit headers!)"
    elif rate_limit:
        rl_state = (
            "requested, but commerce_api/http/ratelimit.py does not exist (nothing to measure)"
        )
    else:
        rl_state = "OFF (COMMERCE_RATE_LIMIT_ENABLED=0)"
    print()
    name, threads = common.worker_class()
    kind = f"{name} workers x {threads} threads" if name == "gthread" else f"{name} workers"
    print(f"Commerce API benchmark: gunicorn 2 {kind} per app, 127.0.0.1 only")
    print(f"load generator: {load_desc}")
    if name == "sync":
        print(
            "  (clients keep connections alive; gunicorn's sync workers answer 'Connection: "
            "close', so every request opens a new loopback connection, for all apps alike)"
        )
    print(
        f"  {args.rounds} rounds x {slice_seconds} s per case, cases taking turns, after a "
        f"{args.warmup} s warm-up each; "
        + (
            "p50/p99 = median of the rounds' values (wrk)"
            if client == "wrk"
            else "p50/p99 exact over all rounds"
        )
    )
    print(
        f"database: SQLite (WAL), {args.products:,} products + {listing_count:,} listings "
        f"in one tenant, seeded in {seed_seconds:.1f} s (executemany, one transaction)"
    )
    print(f"rate limiting: {rl_state}")
    print(f"deep cursor: page {args.pages}, {cursor_note}")
    print(f"(b) and (f) cycle through {len(sample):,} random skus of the {args.products:,}")
    print()
    labels = {letter: label for letter, label, *_ in cases}
    if rate_limit:
        head = f"{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'requests':>10}{'errors':>7}"
        print(f"{'':<46}{'rate limiting ON (default)':^44}   {'rate limiting OFF':^44}")
        print(f"{'case':<46}{head}   {head}")
    else:
        print(f"{'case':<46}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'requests':>10}{'errors':>7}")

    def cells(r):
        return (
            f"{r['rps']:>9,.0f}{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}"
            f"{r['requests']:>10,}{r['errors']:>7}"
        )

    for letter in "efabcd":
        line = f"({letter}) {labels[letter]:<42}{cells(results[letter])}"
        if letter + "0" in results:
            line += f"   {cells(results[letter + '0'])}"
        print(line)
    print()

    def per_round(top, bottom):
        pairs = zip(results[top]["rounds_rps"], results[bottom]["rounds_rps"], strict=True)
        return [t / b for t, b in pairs]

    def ratio(top, bottom, bar, at_least, label, note=""):
        """The median of the per-round ratios top/bottom (req/s), against its bar."""
        rounds_ratios = per_round(top, bottom)
        value = statistics.median(rounds_ratios)
        ok = value >= bar if at_least else value <= bar
        print(
            f"{label:<44} = {value:.2f}  bar {'>=' if at_least else '<='} {bar:.2f}  "
            f"{'PASS' if ok else 'FAIL'}  (median of rounds "
            f"{', '.join(f'{x:.2f}' for x in rounds_ratios)}; totals "
            f"{results[top]['rps'] / results[bottom]['rps']:.2f}){note}"
        )
        return ok

    # Each round measures every case seconds apart: the median of the rounds' ratios
    # resists a burst of other load better than the ratio of the totals. (d)/(c) is time
    # per request of (d) over (c), i.e. req/s of (c) over (d).
    if rate_limit:
        # issue 14: the default configuration (rate limiting on) as fast as the measured one
        oks = [
            ratio("b", "f", 0.6, True, "(b)/(f) req/s, rate limiting on"),
            ratio("c", "c0", 0.8, True, "(c) on / (c) off, first list page req/s"),
            ratio("c", "d", 1.2, False, "(d)/(c) time per request, rate limiting on"),
            ratio("b0", "f", 0.5, True, "(b)/(f) req/s, rate limiting off", "  [issue 2]"),
            ratio("c0", "d0", 1.3, False, "(d)/(c) time per request, off", "  [issue 2]"),
        ]
        b_on_off = statistics.median(per_round("b", "b0"))
        print(f"{'(b) on / (b) off, product GET req/s':<44} = {b_on_off:.2f}  (no bar)")
    else:
        oks = [
            ratio("b", "f", 0.5, True, "(b)/(f) req/s ratio"),
            ratio("c", "d", 1.3, False, "(d)/(c) time-per-request ratio"),
        ]
    errors = sum(r["errors"] for r in results.values())
    if errors:
        print(f"ERRORS: {errors} requests failed or answered non-2xx/3xx")
    print(f"total run time: {total_seconds:.0f} s")
    return 0 if all(oks) and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
