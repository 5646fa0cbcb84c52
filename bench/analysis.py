"""Analysis jobs benchmark (issue 12): ``.venv/bin/python bench/analysis.py``.

On a temporary SQLite database (schema by ``commerce-api init-db``), in this process:

  review_sentiment  10,000 distinct inline reviews (written by the sandbox marketplace's
                    review generator over 2,000 SKUs), dispatched with the service behind
                    POST /api/ai-jobs, run by an in-process worker (``worker --once``):
                    every review is scored and stored. Then the same job again: all
                    10,000 are known, none is scored.
  return_classify   50,000 orders (1-3 lines over 300 SKUs, ~10 % with a return whose
                    reason text is unique), seeded with one executemany per table, then
                    the job over all of them.

  catalogue         (pure CPU, no database) what ``llm_visibility_score`` and
                    ``listing_optimize`` do over a catalogue of 50,000 products: the
                    mention matcher built and 2,000 answers read (the most one job asks),
                    and the keyword corpus built with 100 suggestions from titles and 100 from
                    descriptions. ``--catalogue-only`` runs this part alone and prints
                    the CPU seconds of the process.

The time of a job is its run as the worker records it (``completed_at - started_at``: the
handler and the writing of its result); dispatch (the params check of 10,000 reviews) is
shown beside it, and the CPU time this process used while the worker ran (the figure to
look at when other load shares the machine's cores: wall times then stretch). Bars (on
the run time): review_sentiment <= 3 s, return_classify <= 10 s. Exit status 1 when a bar
fails or a job does not complete.
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402

REVIEW_BAR = 3.0
RETURN_BAR = 10.0
MENTIONS_BAR = 60.0  # 2,000 answers against 50,000 products (the job has 900 s)
KEYWORDS_BAR = 10.0
DAY_MS = 86_400_000


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, default=10_000)
    parser.add_argument("--orders", type=int, default=50_000)
    parser.add_argument(
        "--catalogue-only", action="store_true", help="only the catalogue part (no database)"
    )
    return parser.parse_args(argv)


def review_params(count):
    from commerce_api.marketplaces.sandbox_reviews import make_review

    reviews = []
    for i in range(count):
        sku = f"SKU-{i % 2000:05d}"
        review = make_review("bench", "bench", sku, f"Product {i % 2000}", i // 2000 + 1)
        reviews.append(
            {
                "id": review["id"],
                "sku": sku,
                "rating": review["rating"],
                "title": review["title"],
                "text": review["text"],
            }
        )
    return {"reviews": reviews}


REASONS = (
    ("defective", "Stopped working after {n} days, the switch is faulty."),
    ("damaged", "Arrived damaged, the box was crushed on one corner ({n})."),
    (None, "Too small, I usually take a size {n} and it does not fit."),
    ("not_as_described", "Colour is different from the photos, more grey than blue ({n})."),
    (None, "Received the wrong item, ordered black got the model {n}."),
    (None, "Two screws were missing from the pack, only {n} included."),
    ("no_longer_needed", "Changed my mind, bought another one {n} days ago."),
    (None, "Arrived {n} days late, after the birthday."),
    (None, "Found it cheaper elsewhere, {n} less at another shop."),
    ("other", "Returning it, reference {n}."),
)


def seed_orders(tenant_id, count, seed=12):
    """``count`` delivered orders with lines and returns, straight into the tables."""
    from decimal import Decimal

    from commerce_api.db import db
    from commerce_api.orders.models import Order, OrderLine, OrderReturn
    from commerce_api.timeutil import now_ms

    rng = random.Random(seed)
    now = now_ms()
    skus = [f"SKU-{i:04d}" for i in range(300)]
    orders, lines, returns = [], [], []
    for n in range(count):
        order_id = f"ord_B{n:025d}"
        placed = now - rng.randint(0, 180) * DAY_MS - rng.randint(0, DAY_MS)
        chosen = rng.sample(skus, rng.randint(1, 3))
        total = Decimal("0")
        for position, sku in enumerate(chosen, start=1):
            quantity = rng.randint(1, 3)
            total += Decimal("9.99") * quantity
            lines.append(
                {
                    "id": f"oln_B{n:020d}{position}",
                    "order": order_id,
                    "tenant": tenant_id,
                    "position": position,
                    "external_line_item_id": str(position),
                    "sku": sku,
                    "title": sku,
                    "quantity": quantity,
                    "unit_price": Decimal("9.99"),
                    "line_total": Decimal("9.99") * quantity,
                    "shipped_quantity": quantity,
                }
            )
        has_returns = rng.random() < 0.10
        if has_returns:
            reason, text = rng.choice(REASONS)
            returns.append(
                {
                    "id": f"ret_B{n:025d}",
                    "order": order_id,
                    "tenant": tenant_id,
                    "dedupe_key": f"b{n}",
                    "sku": chosen[0],
                    "quantity": 1,
                    "reason": reason,
                    "reason_text": text.format(n=n),
                    "returned_at": placed + rng.randint(2, 20) * DAY_MS,
                    "created_at": now,
                }
            )
        orders.append(
            {
                "id": order_id,
                "tenant": tenant_id,
                "connection_id": None,
                "marketplace": rng.choice(("amazon", "ebay")),
                "external_order_id": f"B-{n:07d}",
                "status": "delivered",
                "fulfillment_method": "FBM",
                "total_amount": total,
                "currency": "USD",
                "placed_at": placed,
                "shipping_address": None,
                "shipment": None,
                "cancellation": None,
                "has_returns": has_returns,
                "stock_shortage": False,
                "reserved": {},
                "source": "import",
                "created_at": now,
                "updated_at": now,
            }
        )
    with db.atomic():
        common._insert_many(db, Order, orders)
        common._insert_many(db, OrderLine, lines)
        common._insert_many(db, OrderReturn, returns)
    return len(lines), len(returns)


def run_job(app, tenant_id, job_type, params):
    """Dispatch (timed), run with an in-process worker; ``(job, dispatch_s, wall_s, cpu_s)``
    (``cpu_s``: this process's CPU time while the worker ran)."""
    from commerce_api.jobs.models import Job
    from commerce_api.jobs.services import dispatch_job
    from commerce_api.jobs.worker import Worker

    started = time.perf_counter()
    job = dispatch_job(tenant_id, {"type": job_type, "params": params}, created_by="bench")
    dispatched = time.perf_counter()
    cpu = time.process_time()
    Worker(app, once=True, install_signals=False, concurrency=1).run()
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - dispatched
    return Job.get_by_id(job["id"]), dispatched - started, wall, cpu


def report(name, outcome, bar, detail):
    job, dispatch_s, wall_s, cpu_s = outcome
    run_s = (job.completed_at - job.started_at) / 1000 if job.completed_at else float("nan")
    ok = job.status == "completed" and run_s <= bar
    print(
        f"| {name} | {detail} | {dispatch_s:.2f} s | {run_s:.2f} s | {cpu_s:.2f} s "
        f"| {wall_s:.2f} s | <= {bar:g} s | {'ok' if ok else 'FAIL'} |"
    )
    if job.status != "completed":
        print(f"  job {job.id} ended {job.status}: {job.error}")
    return ok


def catalogue_titles(count, seed=25):
    """``[(sku, category, title)]``: titles of a kind noun, two common attributes and two
    words of a long tail (model names, sizes), as real catalogues mix them."""
    rng = random.Random(seed)
    kinds = [
        "mug",
        "cup",
        "bottle",
        "towel",
        "blanket",
        "candle",
        "pen",
        "notebook",
        "bag",
        "tote",
        "lamp",
        "vase",
    ]
    common_words = "enamel steel linen wool soy brass canvas ceramic glass travel small large"
    tail = [f"model{n}" for n in range(20_000)]
    rows = []
    for n in range(count):
        words = [*rng.sample(common_words.split(), 2), *rng.sample(tail, 2), rng.choice(kinds)]
        rows.append((f"SKU-{n}", rng.choice(("kitchen", "home", "bags")), " ".join(words)))
    return rows


def bench_catalogue(products=50_000, answers=2_000):
    """Time the matcher and the keyword corpus; returns the table rows' pass/fail."""
    from commerce_api.analysis.listing_keywords import KeywordCorpus
    from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

    rows = catalogue_titles(products)
    rng = random.Random(26)
    started = time.perf_counter()
    matcher = CatalogueMatcher([Product(sku, title) for sku, _, title in rows], "Fieldhouse")
    built = time.perf_counter() - started
    texts = []
    for _ in range(answers):
        picks = rng.sample(rows, 5)
        items = [
            f"{i}. Fieldhouse {title} - a good choice." for i, (_, _, title) in enumerate(picks, 1)
        ]
        items += [f"{i}. Falcon {picks[0][2]}." for i in range(6, 9)]
        texts.append("Here are my picks:\n" + "\n".join(items) + "\nAny of these will do.")
    named = 0
    for text in texts:
        named += sum(len(found) for found in matcher.read(text)[1])
    mentions = time.perf_counter() - started
    started = time.perf_counter()
    corpus = KeywordCorpus((category, title) for _, category, title in rows)
    common = [
        "enamel",
        "steel",
        "linen",
        "wool",
        "soy",
        "brass",
        "canvas",
        "ceramic",
        "glass",
        "travel",
        "small",
        "large",
    ]
    suggested = sum(
        len(corpus.suggest(category, title))
        + len(
            corpus.suggest(  # and with a description naming three common words
                category, title, description=" and ".join(rng.sample(common, 3)) + "."
            )
        )
        for _, category, title in rows[:100]
    )
    keywords = time.perf_counter() - started
    ok_mentions, ok_keywords = mentions <= MENTIONS_BAR, keywords <= KEYWORDS_BAR
    print("| catalogue work | input | time | bar | |")
    print("|---|---|---|---|---|")
    print(
        f"| mentions | matcher over {products:,} products ({built:.1f} s), {answers:,} answers "
        f"read, {named:,} SKUs named | {mentions:.1f} s | <= {MENTIONS_BAR:g} s "
        f"| {'ok' if ok_mentions else 'FAIL'} |"
    )
    print(
        f"| keywords | corpus of {products:,} titles, 200 suggestions ({suggested} terms) "
        f"| {keywords:.1f} s | <= {KEYWORDS_BAR:g} s | {'ok' if ok_keywords else 'FAIL'} |"
    )
    return [ok_mentions, ok_keywords]


def main(argv=None):
    args = parse_args(argv)
    if args.catalogue_only:
        cpu = time.process_time()
        results = bench_catalogue()
        print(f"(catalogue part: {time.process_time() - cpu:.1f} s CPU in this process)")
        return 0 if all(results) else 1
    from commerce_api import create_app
    from commerce_api.db import db

    with common.temp_directory() as tmp:
        url = common.sqlite_url(os.path.join(tmp, "bench.db"))
        common.init_db(url)
        app = create_app({"DATABASE_URL": url, "RATE_LIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"})
        with app.app_context(), db.connection_context():
            tenant_id, _ = common.create_tenant_and_key()
            params = review_params(args.reviews)
            load = os.getloadavg()[0]
            print(
                f"analysis benchmark on {os.cpu_count()} cores, SQLite (WAL), "
                f"load average {load:.1f} at the start"
            )
            print("| job | input | dispatch | run (worker) | CPU | dispatch to done | bar | |")
            print("|---|---|---|---|---|---|---|---|")
            results = []
            outcome = run_job(app, tenant_id, "review_sentiment", params)
            job = outcome[0]
            results.append(
                report(
                    "review_sentiment",
                    outcome,
                    REVIEW_BAR,
                    f"{args.reviews:,} new inline reviews "
                    f"({job.result and job.result['new_review_count']:,} scored)",
                )
            )
            outcome = run_job(app, tenant_id, "review_sentiment", params)
            job = outcome[0]
            results.append(
                report(
                    "review_sentiment",
                    outcome,
                    REVIEW_BAR,
                    f"the same {args.reviews:,} again "
                    f"({job.result and job.result['new_review_count']:,} scored)",
                )
            )
            seeded = time.perf_counter()
            line_count, return_count = seed_orders(tenant_id, args.orders)
            seeded = time.perf_counter() - seeded
            outcome = run_job(app, tenant_id, "return_classify", {})
            job = outcome[0]
            results.append(
                report(
                    "return_classify",
                    outcome,
                    RETURN_BAR,
                    f"{args.orders:,} orders, {line_count:,} lines, {return_count:,} returns "
                    f"({len(job.result['anomalies']) if job.result else 0} anomalies)",
                )
            )
            print(f"(seeding the orders took {seeded:.1f} s, not counted)")
    results += bench_catalogue()
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
