"""One count shared by every gunicorn worker process: in the database, or in Redis."""

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
import requests

from commerce_api.db import is_postgres
from commerce_api.http.ratelimit import RateLimitCounter, SqliteFileCounter
from commerce_api.http.ratelimit_slots import SlotFileCounter
from tests.support.factories import auth_headers, make_key, make_tenant
from tests.support.http_support import redis_only
from tests.support.servers import gunicorn_server


def stored_counter(app, key):
    """The counter row, where the server keeps it (SQLite: the counters' own slot file)."""
    database = app.extensions["commerce"]["database"]
    if is_postgres(database):
        return RateLimitCounter.get_by_id(key)
    path = database.database
    counter = SlotFileCounter(f"{path}-ratelimit-slots", f"{path}-ratelimit", SqliteFileCounter)
    (row,) = [row for row in counter.rows() if row["counter_key"] == key]
    return SimpleNamespace(**row)


def wait_until_well_inside_a_minute(margin=20):
    """Windows are clock minutes: start where 75 quick requests cannot cross a minute's end."""
    second = time.time() % 60
    if second > 60 - margin:
        time.sleep(60 - second + 0.2)


def send_75(base, headers):
    def get(_):
        response = requests.get(base + "/api/products", headers=headers, timeout=10)
        return response.status_code, response.headers, time.time()

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(get, range(75)))


def check_75(results, window_start):
    window_end = window_start + 60
    allowed = [r for r in results if r[0] == 200]
    refused = [r for r in results if r[0] == 429]
    assert (len(allowed), len(refused)) == (60, 15), [r[0] for r in results]
    # every allowed request saw its own place in the one shared count: 59, 58, ..., 0
    remaining = sorted(int(h["X-RateLimit-Remaining"]) for _, h, _ in allowed)
    assert remaining == list(range(60))
    for _, headers, _ in allowed + refused:
        assert headers["X-RateLimit-Limit"] == "60"
        assert int(headers["X-RateLimit-Reset"]) == window_end
    for _, headers, sent_at in refused:
        assert headers["X-RateLimit-Remaining"] == "0"
        retry_after = int(headers["Retry-After"])
        assert 1 <= retry_after <= 60
        assert abs(retry_after - (window_end - sent_at)) <= 2


@pytest.mark.slow
def test_two_workers_share_one_count_in_the_database(app, database_url):
    tenant = make_tenant("starter")
    key, secret = make_key(tenant)
    with gunicorn_server(database_url, workers=2, RATE_LIMIT_ENABLED=1) as base:
        wait_until_well_inside_a_minute()
        window_start = int(time.time() // 60) * 60
        results = send_75(base, auth_headers(tenant, secret))
    check_75(results, window_start)
    row = stored_counter(app, f"k:{key.id}")
    # the 15 refused requests were counted nowhere
    assert (row.minute_count, row.hour_count) == (60, 60)


@pytest.mark.slow
@redis_only
def test_two_workers_share_one_count_in_redis(app, database_url):
    import redis

    prefix = f"commerce-test-{uuid.uuid4().hex}"
    client = redis.Redis(host="127.0.0.1", port=6379)
    tenant = make_tenant("starter")
    key, secret = make_key(tenant)
    try:
        with gunicorn_server(
            database_url,
            workers=2,
            RATE_LIMIT_ENABLED=1,
            REDIS_URL="redis://127.0.0.1:6379/0",
            RATE_LIMIT_KEY_PREFIX=prefix,
        ) as base:
            wait_until_well_inside_a_minute()
            window_start = int(time.time() // 60) * 60
            results = send_75(base, auth_headers(tenant, secret))
        check_75(results, window_start)
        counts = {k.decode(): int(client.get(k)) for k in client.scan_iter(f"{prefix}:*")}
        assert counts == {
            f"{prefix}:{{k:{key.id}}}:60:{window_start // 60}": 60,
            f"{prefix}:{{k:{key.id}}}:3600:{window_start // 3600}": 60,
        }
        assert RateLimitCounter.select().count() == 0
    finally:
        for name in client.scan_iter(f"{prefix}:*"):
            client.delete(name)
