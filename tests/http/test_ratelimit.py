"""Rate limits in one process, on a clock the tests control (the shared count across
processes is in test_ratelimit_server.py)."""

import time
import uuid

import jwt
import pytest

from commerce_api.auth.models import Tenant
from commerce_api.cli import cli
from commerce_api.db import is_postgres
from commerce_api.http import ratelimit
from commerce_api.http.ratelimit import RateLimitCounter
from commerce_api.http.ratelimit_slots import SlotFileCounter
from commerce_api.products.models import Product
from tests.support.auth_support import JWT_AUDIENCE, JWT_ISSUER
from tests.support.factories import auth_headers, make_key, make_tenant, product_body, snapshot
from tests.support.http_support import redis_only

T0 = 1_900_000_800  # the first second of an hour (and of a minute), far from the real clock


class FakeClock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return FakeClock(T0 + 5)


@pytest.fixture
def limited(app, make_app, clock):
    """An app with rate limiting on and the fake clock; tables emptied by ``app``."""
    built = make_app(RATE_LIMIT_ENABLED=True)
    limiter = built.extensions["commerce"]["rate_limiter"]
    limiter.clock = clock
    global _counter
    _counter = limiter.counter
    if isinstance(_counter, SlotFileCounter):  # SQLite: a slot file of their own
        _counter.clear()
    yield built
    _counter = None


_counter = None  # the counter of the app the ``limited`` fixture built


def counter_rows():
    """Every stored count of the ``limited`` app, as ``rate_limit_counter`` rows."""
    if isinstance(_counter, SlotFileCounter):
        return _counter.rows()
    return list(RateLimitCounter.select().dicts())


def stored(key=None):
    """The one stored count (or ``key``'s), as a row."""
    rows = [row for row in counter_rows() if key is None or row["counter_key"] == key]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture
def client(limited):
    return limited.test_client()


def key_headers(plan="starter", scopes=None, **key_options):
    tenant = make_tenant(plan)
    kwargs = {"scopes": scopes} if scopes else {}
    _, secret = make_key(tenant, **kwargs, **key_options)
    return auth_headers(tenant, secret)


def rate_headers(response):
    return tuple(
        int(response.headers[f"X-RateLimit-{name}"]) for name in ("Limit", "Remaining", "Reset")
    )


def counter_row(**where):
    rows = [r for r in counter_rows() if all(r[k] == v for k, v in where.items())]
    assert len(rows) == 1, rows
    return rows[0]


def test_headers_count_down_then_429_with_retry_after(client, clock):
    headers = key_headers("starter")
    minute_end = T0 + 60
    for expected_remaining in range(59, -1, -1):
        response = client.get("/api/products", headers=headers)
        assert response.status_code == 200
        assert rate_headers(response) == (60, expected_remaining, minute_end)
    clock.now = T0 + 42.5
    refused = client.get("/api/products", headers=headers)
    assert refused.status_code == 429
    error = refused.get_json()["error"]
    assert error["code"] == "RATE_LIMITED"
    assert error["details"] == {"limit": 60, "window": "minute", "retry_after": 18}
    assert refused.headers["Retry-After"] == "18"
    assert rate_headers(refused) == (60, 0, minute_end)
    assert refused.headers["X-Request-ID"]


def test_refused_request_counts_nowhere_and_changes_nothing(client, clock):
    tenant = make_tenant("starter")
    _, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    for _ in range(60):
        assert client.get("/api/products", headers=headers).status_code == 200
    before = snapshot()
    for _ in range(5):
        refused = client.post("/api/products", json=product_body(sku="NEW-1"), headers=headers)
        assert refused.status_code == 429
    assert snapshot() == before
    assert Product.select().count() == 0
    (row,) = counter_rows()
    assert (row["minute_count"], row["hour_count"]) == (60, 60)
    # the next minute: the refused requests were not counted in the hour either
    clock.now = T0 + 60
    response = client.post("/api/products", json=product_body(sku="NEW-1"), headers=headers)
    assert response.status_code == 201
    assert rate_headers(response) == (60, 59, T0 + 120)
    (row,) = counter_rows()
    assert (row["minute_count"], row["hour_count"]) == (1, 61)


def test_per_hour_limit_of_the_plan(client, clock):
    headers = key_headers("starter")
    sent = 0
    minute = 0
    while sent < 1000:
        clock.now = T0 + minute * 60 + 1
        for _ in range(min(60, 1000 - sent)):
            response = client.get("/api/products", headers=headers)
            assert response.status_code == 200, (sent, response.get_json())
            sent += 1
        minute += 1
    # the last minute sent 40: the hour (0 left) is now closer to running out than the minute
    assert rate_headers(response) == (1000, 0, T0 + 3600)
    clock.now = T0 + minute * 60 + 30  # a fresh minute, same hour
    refused = client.get("/api/products", headers=headers)
    assert refused.status_code == 429
    assert refused.get_json()["error"]["details"]["window"] == "hour"
    assert int(refused.headers["Retry-After"]) == 3600 - (minute * 60 + 30)
    assert rate_headers(refused) == (1000, 0, T0 + 3600)
    clock.now = T0 + 3600
    allowed = client.get("/api/products", headers=headers)
    assert allowed.status_code == 200
    assert rate_headers(allowed) == (60, 59, T0 + 3660)


def test_growth_and_enterprise_plan_limits(client):
    growth = client.get("/api/products", headers=key_headers("growth"))
    assert rate_headers(growth)[:2] == (300, 299)
    enterprise = client.get("/api/products", headers=key_headers("enterprise"))
    assert rate_headers(enterprise)[:2] == (1000, 999)


def test_enterprise_key_override(client, clock):
    tenant = make_tenant("enterprise")
    _, secret = make_key(tenant, rate_limit_per_minute=10, rate_limit_per_hour=15)
    headers = auth_headers(tenant, secret)
    _, plain_secret = make_key(tenant)
    for expected in range(9, -1, -1):
        response = client.get("/api/products", headers=headers)
        assert rate_headers(response) == (10, expected, T0 + 60)
    refused = client.get("/api/products", headers=headers)
    assert refused.status_code == 429
    assert refused.get_json()["error"]["details"]["limit"] == 10
    # another key of the tenant has its own count and the plan's limit
    other = client.get("/api/products", headers=auth_headers(tenant, plain_secret))
    assert rate_headers(other)[:2] == (1000, 999)
    # next minute: 5 left in the hour, which is now the window closest to running out
    clock.now = T0 + 61
    for expected in range(4, -1, -1):
        response = client.get("/api/products", headers=headers)
        assert response.status_code == 200
        assert rate_headers(response) == (15, expected, T0 + 3600)
    refused = client.get("/api/products", headers=headers)
    assert refused.status_code == 429
    assert refused.get_json()["error"]["details"] == {
        "limit": 15,
        "window": "hour",
        "retry_after": 3600 - 61,
    }


def test_override_of_one_window_keeps_the_plan_for_the_other(client):
    tenant = make_tenant("enterprise")
    _, secret = make_key(tenant, rate_limit_per_hour=3)
    headers = auth_headers(tenant, secret)
    assert rate_headers(client.get("/api/products", headers=headers))[:2] == (3, 2)
    row = stored()
    assert (row["minute_count"], row["hour_count"]) == (1, 1)


def test_override_counts_on_enterprise_only(client, runner, limited):
    tenant = make_tenant("enterprise")
    _, secret = make_key(tenant, rate_limit_per_minute=7)
    headers = auth_headers(tenant, secret)
    assert rate_headers(client.get("/api/products", headers=headers))[:2] == (7, 6)
    result = runner.invoke(
        cli, args=["tenants", "set-plan", "--tenant", tenant.id, "--plan", "growth"]
    )
    assert result.exit_code == 0, result.output
    assert rate_headers(client.get("/api/products", headers=headers))[:2] == (300, 298)


def test_plan_change_takes_effect_on_the_next_request(app, make_app, clock, runner):
    built = make_app(RATE_LIMIT_ENABLED=True, AUTH_CACHE_SECONDS=3600)
    built.extensions["commerce"]["rate_limiter"].clock = clock
    client = built.test_client()
    tenant = make_tenant("starter")
    _, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    assert rate_headers(client.get("/api/products", headers=headers))[:2] == (60, 59)
    result = runner.invoke(
        cli, args=["tenants", "set-plan", "--tenant", tenant.id, "--plan", "growth", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip().startswith("{")
    assert '"plan": "growth"' in result.output
    assert Tenant.get_by_id(tenant.id).plan == "growth"
    limit, remaining, _ = rate_headers(client.get("/api/products", headers=headers))
    # the very next request, and the count goes on across the plan change
    assert limit == 300 and remaining < 299


def test_set_plan_refuses_unknown_tenant_and_plan(runner, tenant):
    missing = runner.invoke(
        cli, args=["tenants", "set-plan", "--tenant", str(uuid.uuid4()), "--plan", "growth"]
    )
    assert missing.exit_code == 1
    assert "RESOURCE_NOT_FOUND" in missing.output
    bad = runner.invoke(cli, args=["tenants", "set-plan", "--tenant", tenant.id, "--plan", "gold"])
    assert bad.exit_code == 2
    assert Tenant.get_by_id(tenant.id).plan == "starter"


def user_token(jwt_keys, tenant_ids, sub="user-1", scope="products:read products:write", **extra):
    claims = {
        "sub": sub,
        "email": f"{sub}@example.com",
        "tenants": tenant_ids,
        "scope": scope,
        "iss": JWT_ISSUER,
        "aud": JWT_AUDIENCE,
        "iat": int(time.time()),
        "exp": int(time.time()) + 3600,
        **extra,
    }
    return jwt.encode(claims, jwt_keys["rsa"], algorithm="RS256")


def test_jwt_user_limit_is_per_user(client, jwt_keys):
    tenant = make_tenant("starter")
    _, key_secret = make_key(tenant)

    def as_user(token):
        return {"Authorization": f"Bearer {token}", "X-Tenant-ID": tenant.id}

    first = as_user(user_token(jwt_keys, [tenant.id]))
    # a second token of the same user (another login) shares the count
    second = as_user(user_token(jwt_keys, [tenant.id], iat=int(time.time()) - 60))
    assert first != second
    for index in range(60):
        response = client.get("/api/products", headers=first if index % 2 else second)
        assert response.status_code == 200
        assert rate_headers(response)[:2] == (60, 59 - index)
    for headers in (first, second):
        refused = client.get("/api/products", headers=headers)
        assert refused.status_code == 429
        assert refused.get_json()["error"]["code"] == "RATE_LIMITED"
    other_user = client.get(
        "/api/products", headers=as_user(user_token(jwt_keys, [tenant.id], "u2"))
    )
    assert rate_headers(other_user)[:2] == (60, 59)
    api_key = client.get("/api/products", headers=auth_headers(tenant, key_secret))
    assert rate_headers(api_key)[:2] == (60, 59)
    assert stored(f"u:{tenant.id}:user-1")["minute_count"] == 60


def test_jwt_user_gets_the_plan_of_the_tenant_it_acts_for(client, jwt_keys):
    starter, growth = make_tenant("starter"), make_tenant("growth")
    token = user_token(jwt_keys, [starter.id, growth.id])
    for tenant, limit in ((starter, 60), (growth, 300)):
        headers = {"Authorization": f"Bearer {token}", "X-Tenant-ID": tenant.id}
        assert rate_headers(client.get("/api/products", headers=headers))[:2] == (limit, limit - 1)


def test_headers_on_error_responses_after_authentication(client):
    headers = key_headers("starter", scopes=["products:read"])
    cases = [
        (client.get("/api/products/NOPE", headers=headers), 404),
        (client.get("/api/products?limit=0", headers=headers), 422),
        (client.get("/api/products?bogus=1", headers=headers), 422),
        (client.post("/api/products", json=product_body(), headers=headers), 403),
        (
            client.post(
                "/api/products", data="{", headers=headers, content_type="application/json"
            ),
            400,
        ),
        (client.post("/api/products", data="x", headers=headers, content_type="text/plain"), 415),
    ]
    for index, (response, status) in enumerate(cases):
        assert response.status_code == status, response.get_json()
        assert rate_headers(response)[:2] == (60, 59 - index)


def test_no_headers_and_no_count_without_authentication(client):
    health = client.get("/api/health")
    assert health.status_code == 200
    assert "X-RateLimit-Limit" not in health.headers
    tenant = make_tenant()
    unauthenticated = client.get("/api/products", headers={"X-Tenant-ID": tenant.id})
    assert unauthenticated.status_code == 401
    assert "X-RateLimit-Limit" not in unauthenticated.headers
    assert counter_rows() == []


def test_health_is_not_limited(client):
    for _ in range(80):
        assert client.get("/api/health").status_code == 200


def test_disabled_by_configuration(app, headers):
    response = app.test_client().get("/api/products", headers=headers)
    assert response.status_code == 200
    assert "X-RateLimit-Limit" not in response.headers
    assert "rate_limiter" not in app.extensions["commerce"]


def test_counters_of_past_hours_are_purged(client, clock, limited):
    if isinstance(_counter, SlotFileCounter):
        pytest.skip("the SQLite slot file reuses a past hour's slot (test_ratelimit_slots)")
    headers = key_headers("starter")
    client.get("/api/products", headers=headers)
    RateLimitCounter.create(
        counter_key="k:key_old", minute_window=0, minute_count=5, hour_window=0, hour_count=5
    )
    counter = limited.extensions["commerce"]["rate_limiter"].counter
    counter._next_purge = 0  # the purge runs at most every PURGE_INTERVAL_SECONDS per process
    client.get("/api/products", headers=headers)
    assert not RateLimitCounter.select().where(RateLimitCounter.counter_key == "k:key_old").exists()
    assert RateLimitCounter.select().count() == 1


def test_window_rolls_over_on_the_minute(client, clock):
    headers = key_headers("starter")
    clock.now = T0 + 59.999
    assert rate_headers(client.get("/api/products", headers=headers)) == (60, 59, T0 + 60)
    clock.now = T0 + 60
    assert rate_headers(client.get("/api/products", headers=headers)) == (60, 59, T0 + 120)


# --- Redis ---------------------------------------------------------------------------


@pytest.fixture
def redis_app(app, make_app, clock):
    import redis

    prefix = f"commerce-test-{uuid.uuid4().hex}"
    built = make_app(
        RATE_LIMIT_ENABLED=True, REDIS_URL="redis://127.0.0.1:6379/0", RATE_LIMIT_KEY_PREFIX=prefix
    )
    built.extensions["commerce"]["rate_limiter"].clock = clock
    yield built
    client = redis.Redis(host="127.0.0.1", port=6379)
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)


@redis_only
def test_redis_counts_both_windows_and_refuses_without_counting(redis_app, clock):
    client = redis_app.test_client()
    tenant = make_tenant("enterprise")
    key, secret = make_key(tenant, rate_limit_per_minute=3, rate_limit_per_hour=5)
    headers = auth_headers(tenant, secret)
    for expected in (2, 1, 0):
        assert rate_headers(client.get("/api/products", headers=headers)) == (3, expected, T0 + 60)
    refused = client.get("/api/products", headers=headers)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "55"
    counter = redis_app.extensions["commerce"]["rate_limiter"].counter
    minute_key, hour_key = counter.keys(
        f"k:{key.id}", (int(clock.now // 60), int(clock.now // 3600))
    )
    assert (int(counter.client.get(minute_key)), int(counter.client.get(hour_key))) == (3, 3)
    assert 0 < counter.client.ttl(minute_key) <= 120
    clock.now = T0 + 60
    for expected in (1, 0):
        assert rate_headers(client.get("/api/products", headers=headers)) == (
            5,
            expected,
            T0 + 3600,
        )
    refused = client.get("/api/products", headers=headers)
    assert refused.get_json()["error"]["details"]["window"] == "hour"
    assert RateLimitCounter.select().count() == 0  # nothing counted in the database
    assert counter_rows() == []  # nor in the file of the app without Redis


def test_redis_unreachable_lets_requests_through_uncounted(app, make_app, caplog):
    from tests.support.servers import free_port

    built = make_app(RATE_LIMIT_ENABLED=True, REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    headers = key_headers("starter")
    client = built.test_client()
    with caplog.at_level("WARNING", logger=ratelimit.__name__):
        for _ in range(3):
            response = client.get("/api/products", headers=headers)
            assert response.status_code == 200
            assert "X-RateLimit-Limit" not in response.headers
    assert "counter unavailable" in caplog.text


def test_postgres_counts_with_a_prepared_statement_and_survives_losing_it(client, limited):
    from commerce_api.db import is_postgres

    if not is_postgres():
        pytest.skip("PostgreSQL only")
    counter = limited.extensions["commerce"]["rate_limiter"].counter
    headers = key_headers("starter")
    assert rate_headers(client.get("/api/products", headers=headers))[:2] == (60, 59)
    assert counter._use_prepared and len(counter._prepared) >= 1
    connections = list(counter._prepared)
    # a session that already holds the statement (a pooler handing it over) is fine
    counter._prepared.clear()
    assert rate_headers(client.get("/api/products", headers=headers))[:2] == (60, 58)
    assert counter._use_prepared
    # what a pooler that resets sessions does to it
    for connection in connections + list(counter._prepared):
        connection.cursor().execute("DEALLOCATE ALL")
    assert rate_headers(client.get("/api/products", headers=headers))[:2] == (60, 57)
    assert not counter._use_prepared  # plain SQL from now on, and still one shared count
    assert rate_headers(client.get("/api/products", headers=headers))[:2] == (60, 56)


def test_sqlite_counters_live_in_a_file_of_their_own(limited, client):
    if is_postgres():
        pytest.skip("SQLite only")
    counter = limited.extensions["commerce"]["rate_limiter"].counter
    database = limited.extensions["commerce"]["database"]
    assert isinstance(counter, SlotFileCounter)
    assert counter.path == database.database + "-ratelimit-slots"
    assert counter.overflow_path == database.database + "-ratelimit"
    headers = key_headers("starter")
    before = database.execute_sql("PRAGMA data_version").fetchone()[0]
    for _ in range(3):
        assert client.get("/api/products", headers=headers).status_code == 200
    # no counter write reached the main file: its readers' caches stay valid
    assert database.execute_sql("PRAGMA data_version").fetchone()[0] == before
    assert database.execute_sql("SELECT COUNT(*) FROM rate_limit_counter").fetchone()[0] == 0
    assert stored()["minute_count"] == 3
