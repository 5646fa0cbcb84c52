"""Idempotency-Key on POST: replay, reuse with another request, claims, expiry (in process;
concurrent requests against a real server are in test_idempotency_server.py)."""

import json

import pytest

from commerce_api.events.models import Event
from commerce_api.http import idempotency
from commerce_api.http.envelope import one
from commerce_api.http.idempotency import IdempotencyRecord
from commerce_api.products.models import Product
from tests.support.factories import auth_headers, make_key, make_tenant, product_body, snapshot

T0_MS = 1_900_000_800_000


class FakeClock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def with_key(headers, key):
    return {**headers, "Idempotency-Key": key}


def test_replay_returns_the_first_201_instead_of_duplicate_sku(client, headers):
    body = product_body(sku="MUG-1")
    first = client.post("/api/products", json=body, headers=with_key(headers, "create-mug-1"))
    assert first.status_code == 201
    assert "Idempotent-Replayed" not in first.headers
    before = snapshot()
    replay = client.post("/api/products", json=body, headers=with_key(headers, "create-mug-1"))
    assert replay.status_code == 201
    assert replay.get_json() == first.get_json()
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["Content-Type"] == "application/json"
    assert replay.headers["X-Request-ID"] != first.headers["X-Request-ID"]
    assert snapshot() == before  # nothing ran again: no product, no event
    # without the key the same request runs, and the SKU exists
    again = client.post("/api/products", json=body, headers=headers)
    assert again.status_code == 409
    assert again.get_json()["error"]["code"] == "DUPLICATE_SKU"
    assert Product.select().count() == 1


def test_same_body_with_other_formatting_is_the_same_request(client, headers):
    body = product_body(sku="MUG-2")
    first = client.post("/api/products", json=body, headers=with_key(headers, "k-2"))
    reordered = json.dumps(dict(reversed(list(body.items()))), indent=2)
    replay = client.post(
        "/api/products",
        data=reordered,
        content_type="application/json",
        headers=with_key(headers, "k-2"),
    )
    assert replay.status_code == 201
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.get_json() == first.get_json()


def test_same_key_with_another_body_or_path_gives_422(client, headers):
    body = product_body(sku="MUG-3")
    assert client.post("/api/products", json=body, headers=with_key(headers, "k-3")).status_code
    before = snapshot()
    other_body = client.post(
        "/api/products", json=product_body(sku="MUG-4"), headers=with_key(headers, "k-3")
    )
    assert other_body.status_code == 422
    error = other_body.get_json()["error"]
    assert error["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert error["details"] == {"idempotency_key": "k-3"}
    other_path = client.post("/api/products/MUG-3/sync", json={}, headers=with_key(headers, "k-3"))
    assert other_path.status_code == 422
    assert other_path.get_json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert snapshot() == before


def test_domain_errors_are_stored_and_replayed(client, headers):
    body = product_body(sku="MUG-5", gtin="4006381333932")  # bad check digit
    first = client.post("/api/products", json=body, headers=with_key(headers, "k-5"))
    assert first.status_code == 422
    assert first.get_json()["error"]["code"] == "INVALID_GTIN"
    replay = client.post("/api/products", json=body, headers=with_key(headers, "k-5"))
    assert replay.status_code == 422
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.get_json() == first.get_json()


def test_validation_errors_are_not_stored(client, headers):
    incomplete = {"sku": "MUG-6"}
    refused = client.post("/api/products", json=incomplete, headers=with_key(headers, "k-6"))
    assert refused.status_code == 422
    assert refused.get_json()["error"]["code"] == "VALIDATION_ERROR"
    assert IdempotencyRecord.select().count() == 0
    # the client corrects the request and retries it with the same key
    fixed = client.post(
        "/api/products", json=product_body(sku="MUG-6"), headers=with_key(headers, "k-6")
    )
    assert fixed.status_code == 201
    assert "Idempotent-Replayed" not in fixed.headers
    bad_json = client.post(
        "/api/products",
        data="{",
        content_type="application/json",
        headers=with_key(headers, "k-7"),
    )
    assert bad_json.status_code == 400
    assert IdempotencyRecord.select().count() == 1


def test_requests_refused_by_authentication_or_scope_claim_nothing(client, tenant):
    _, reader = make_key(tenant, scopes=["products:read"])
    body = product_body(sku="MUG-8")
    forbidden = client.post(
        "/api/products", json=body, headers=with_key(auth_headers(tenant, reader), "k-8")
    )
    assert forbidden.status_code == 403
    unauthenticated = client.post(
        "/api/products",
        json=body,
        headers={"X-Tenant-ID": tenant.id, "Idempotency-Key": "k-8"},
    )
    assert unauthenticated.status_code == 401
    assert IdempotencyRecord.select().count() == 0
    assert Product.select().count() == 0


def test_a_request_refused_by_the_rate_limit_claims_nothing(app, make_app):
    limited = make_app(RATE_LIMIT_ENABLED=True)
    limiter = limited.extensions["commerce"]["rate_limiter"]
    limiter.clock = lambda: 1_900_000_805
    tenant = make_tenant("enterprise")
    _, secret = make_key(tenant, rate_limit_per_minute=1)
    headers = with_key(auth_headers(tenant, secret), "k-9")
    client = limited.test_client()
    assert client.get("/api/products", headers=auth_headers(tenant, secret)).status_code == 200
    refused = client.post("/api/products", json=product_body(sku="MUG-9"), headers=headers)
    assert refused.status_code == 429
    assert IdempotencyRecord.select().count() == 0 and Product.select().count() == 0
    limiter.clock = lambda: 1_900_000_865  # the next minute
    created = client.post("/api/products", json=product_body(sku="MUG-9"), headers=headers)
    assert created.status_code == 201
    assert "Idempotent-Replayed" not in created.headers


@pytest.mark.parametrize(
    "key",
    ["", "x" * 256, "caf\u00e9", "tab\there", "new\x7fline"],
    ids=["empty", "too-long", "non-ascii", "tab", "del"],
)
def test_invalid_keys_give_400(client, headers, key):
    response = client.post(
        "/api/products", json=product_body(sku="MUG-10"), headers=with_key(headers, key)
    )
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["code"] == "INVALID_IDEMPOTENCY_KEY"
    assert error["details"] == {"header": "Idempotency-Key"}
    assert Product.select().count() == 0 and IdempotencyRecord.select().count() == 0


def test_longest_key_and_spaces_are_accepted(client, headers):
    for key, sku in (("k" * 255, "MUG-11"), ("order 42 / try 1", "MUG-12")):
        body = product_body(sku=sku)
        assert (
            client.post("/api/products", json=body, headers=with_key(headers, key)).status_code
            == 201
        )
        replay = client.post("/api/products", json=body, headers=with_key(headers, key))
        assert replay.headers["Idempotent-Replayed"] == "true"


def test_keys_belong_to_one_principal_and_one_tenant(client, tenant, headers):
    body = product_body(sku="MUG-13")
    assert (
        client.post("/api/products", json=body, headers=with_key(headers, "shared")).status_code
        == 201
    )
    _, other_secret = make_key(tenant)
    other_key = client.post(
        "/api/products", json=body, headers=with_key(auth_headers(tenant, other_secret), "shared")
    )
    # another API key of the tenant runs its own request: the SKU exists now
    assert other_key.status_code == 409
    assert "Idempotent-Replayed" not in other_key.headers
    other_tenant = make_tenant()
    _, secret = make_key(other_tenant)
    elsewhere = client.post(
        "/api/products", json=body, headers=with_key(auth_headers(other_tenant, secret), "shared")
    )
    assert elsewhere.status_code == 201
    assert "Idempotent-Replayed" not in elsewhere.headers


def test_key_is_ignored_on_other_methods(client, headers):
    response = client.get("/api/products", headers=with_key(headers, "x" * 300))
    assert response.status_code == 200
    assert IdempotencyRecord.select().count() == 0


def _fingerprint_of(app, path, body):
    with app.test_request_context(path, method="POST", json=body):
        return idempotency.fingerprint()


def _claim_row(tenant, key_id, idem_key, fingerprint, locked_at):
    IdempotencyRecord.create(
        tenant_id=tenant.id,
        principal=f"key:{key_id}",
        idempotency_key=idem_key,
        fingerprint=fingerprint,
        state="in_progress",
        lock_token="t" * 32,
        created_at=locked_at,
        locked_at=locked_at,
        expires_at=locked_at + idempotency.TTL_MS,
    )


def test_request_in_progress_gives_409_until_its_claim_goes_stale(app, client, tenant):
    store = app.extensions["commerce"]["idempotency"]
    clock = FakeClock(T0_MS)
    store.clock = clock
    try:
        key, secret = make_key(tenant)
        headers = with_key(auth_headers(tenant, secret), "busy")
        body = product_body(sku="MUG-14")
        _claim_row(tenant, key.id, "busy", _fingerprint_of(app, "/api/products", body), T0_MS)
        in_use = client.post("/api/products", json=body, headers=headers)
        assert in_use.status_code == 409
        assert in_use.get_json()["error"]["code"] == "IDEMPOTENCY_KEY_IN_USE"
        assert in_use.headers["Retry-After"] == "1"
        assert Product.select().count() == 0
        # another body for a key in use is a reuse, stale or not
        clock.now = T0_MS + idempotency.LOCK_MS
        reused = client.post("/api/products", json=product_body(sku="X"), headers=headers)
        assert reused.status_code == 422
        # the claim of a request that died is taken over by its retry
        taken_over = client.post("/api/products", json=body, headers=headers)
        assert taken_over.status_code == 201
        assert IdempotencyRecord.get().state == "done"
    finally:
        store.clock = idempotency.now_ms


def test_keys_expire_after_24_hours_and_are_purged(app, client, headers):
    store = app.extensions["commerce"]["idempotency"]
    clock = FakeClock(T0_MS)
    store.clock = clock
    try:
        assert (
            client.post(
                "/api/products", json=product_body(sku="MUG-15"), headers=with_key(headers, "old")
            ).status_code
            == 201
        )
        assert (
            client.post(
                "/api/products", json=product_body(sku="MUG-16"), headers=with_key(headers, "older")
            ).status_code
            == 201
        )
        clock.now = T0_MS + idempotency.TTL_MS - 1
        still = client.post(
            "/api/products", json=product_body(sku="MUG-17"), headers=with_key(headers, "old")
        )
        assert still.status_code == 422
        clock.now = T0_MS + idempotency.TTL_MS
        # an expired key is free again: this is a new request
        fresh = client.post(
            "/api/products", json=product_body(sku="MUG-17"), headers=with_key(headers, "old")
        )
        assert fresh.status_code == 201
        assert "Idempotent-Replayed" not in fresh.headers
        assert IdempotencyRecord.select().count() == 2
        clock.now = T0_MS + idempotency.TTL_MS + 1000
        store._next_purge = 0  # the purge runs at most every PURGE_INTERVAL_SECONDS per process
        client.post(
            "/api/products", json=product_body(sku="MUG-18"), headers=with_key(headers, "new")
        )
        assert sorted(r.idempotency_key for r in IdempotencyRecord.select()) == ["new", "old"]
        clock.now = T0_MS + 3 * idempotency.TTL_MS
        assert store.purge() == 2
        assert IdempotencyRecord.select().count() == 0
    finally:
        store.clock = idempotency.now_ms


def test_server_errors_are_not_stored_and_headers_are_replayed(app, make_app, tenant, headers):
    built = make_app()
    calls = []

    @built.post("/api/test-idempotency")
    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return one(
            {"calls": len(calls)},
            201,
            headers={"Location": "/api/test-idempotency/1", "X-Custom": "kept"},
        )

    client = built.test_client()
    request_headers = with_key(headers, "flaky")
    failed = client.post("/api/test-idempotency", json={"a": 1}, headers=request_headers)
    assert failed.status_code == 500
    assert IdempotencyRecord.select().count() == 0  # released: a retry runs again
    retried = client.post("/api/test-idempotency", json={"a": 1}, headers=request_headers)
    assert retried.status_code == 201 and retried.get_json() == {"data": {"calls": 2}}
    replay = client.post("/api/test-idempotency", json={"a": 1}, headers=request_headers)
    assert replay.status_code == 201 and replay.get_json() == {"data": {"calls": 2}}
    assert len(calls) == 2
    assert replay.headers["Location"] == "/api/test-idempotency/1"
    assert replay.headers["X-Custom"] == "kept"
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers.getlist("Content-Type") == ["application/json"]


def test_replay_of_a_shipment_confirmation(client, runner, tenant, headers, tmp_path):
    pytest.importorskip("commerce_api.orders.routes")
    from commerce_api.cli import cli

    client.post("/api/products", json=product_body(sku="MUG-20"), headers=headers)
    connected = runner.invoke(
        cli,
        [
            "marketplaces",
            "connect",
            "--tenant",
            tenant.id,
            "--marketplace",
            "amazon_us",
            "--connector",
            "sandbox",
        ],
    )
    assert connected.exit_code == 0, connected.output
    orders_file = tmp_path / "orders.json"
    orders_file.write_text(
        json.dumps(
            [
                {
                    "external_order_id": "AMZ-1001",
                    "marketplace": "amazon_us",
                    "status": "confirmed",
                    "fulfillment_method": "FBM",
                    "total_amount": 12.5,
                    "currency": "USD",
                    "created_at": "2026-11-20T10:00:00.000Z",
                    "line_items": [
                        {
                            "external_line_item_id": "L1",
                            "sku": "MUG-20",
                            "title": "Enamel mug",
                            "quantity": 1,
                            "unit_price": 12.5,
                            "line_total": 12.5,
                        }
                    ],
                }
            ]
        )
    )
    imported = runner.invoke(
        cli, ["orders", "import", "--tenant", tenant.id, "--file", str(orders_file)]
    )
    assert imported.exit_code == 0, imported.output
    (order,) = client.get("/api/orders", headers=headers).get_json()["data"]
    shipment = {"carrier": "UPS", "tracking_number": "1Z999"}
    path = f"/api/orders/{order['id']}/shipment"
    first = client.post(path, json=shipment, headers=with_key(headers, "ship-1001"))
    assert first.status_code == 200, first.get_json()
    assert first.get_json()["data"]["status"] == "shipped"
    events = Event.select().count()
    replay = client.post(path, json=shipment, headers=with_key(headers, "ship-1001"))
    assert replay.status_code == 200
    assert replay.get_json() == first.get_json()
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert Event.select().count() == events
    # the same confirmation without the key runs again and is refused
    again = client.post(path, json=shipment, headers=headers)
    assert again.status_code == 409
    assert again.get_json()["error"]["code"] == "ALREADY_SHIPPED"
