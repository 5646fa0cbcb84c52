"""Delivery to a real local receiver: signatures (standardwebhooks and the standard
library), retries, the schedule's end, 410, Retry-After, redelivery, rotation."""

from commerce_api.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from tests.support import webhooks_support
from tests.support.webhooks_support import (
    Receiver,
    create_webhook,
    deliver,
    emit_events,
    verify_library,
    verify_stdlib,
)

hooks_app = webhooks_support.hooks_app  # the fixtures
receiver = webhooks_support.receiver


def deliveries_of(client, headers, webhook_id, **query):
    response = client.get(
        f"/api/webhooks/{webhook_id}/deliveries", headers=headers, query_string=query
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def detail(client, headers, webhook_id, delivery_id):
    response = client.get(f"/api/webhooks/{webhook_id}/deliveries/{delivery_id}", headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def test_every_delivery_verifies_with_both_schemes(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    secret = hook["secret"]
    # a real domain change, through the API, and a few written straight to the outbox
    product = client.post(
        "/api/products", json={"sku": "MUG-1", "title": "Mug ☕ «émail»"}, headers=headers
    )
    assert product.status_code == 201
    emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {"n": i}) for i in range(3)])
    deliver(hooks_app)

    assert len(receiver.requests) == 4
    for request in receiver.requests:
        body, sent = request["body"], request["headers"]
        assert verify_stdlib(secret, body, sent)
        payload = verify_library(secret, body, sent)
        assert set(payload) == {"id", "type", "created_at", "tenant_id", "data"}
        assert payload["tenant_id"] == headers["X-Tenant-ID"]
        assert sent["Content-Type"] == "application/json"
        assert sent["X-Service-Event"] == payload["type"]
        assert sent["webhook-id"] == payload["id"]
        assert sent["X-Service-Delivery"].startswith("dlv_")
    (created,) = [b for b in receiver.bodies() if b["type"] == "product.created"]
    assert created["data"]["title"] == "Mug ☕ «émail»"
    listed = deliveries_of(client, headers, hook["id"])
    assert {d["status"] for d in listed} == {"succeeded"}
    assert {d["id"] for d in listed} == {
        r["headers"]["X-Service-Delivery"] for r in receiver.requests
    }


def test_a_tampered_body_does_not_verify(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {"total": 10})])
    deliver(hooks_app)
    (request,) = receiver.requests
    tampered = request["body"].replace(b"10", b"99")
    assert not verify_stdlib(hook["secret"], tampered, request["headers"])
    assert not verify_stdlib("whsec_" + "A" * 44, request["body"], request["headers"])


def test_500_500_200_is_three_attempts_of_one_delivery(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    (event_id,) = emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
    receiver.script[event_id] = [500, 500]
    deliver(hooks_app)

    assert len(receiver.requests) == 3
    delivery_ids = {r["headers"]["X-Service-Delivery"] for r in receiver.requests}
    assert len(delivery_ids) == 1
    assert {r["headers"]["webhook-id"] for r in receiver.requests} == {event_id}
    assert {r["body"] for r in receiver.requests} == {receiver.requests[0]["body"]}
    for request in receiver.requests:
        assert verify_library(hook["secret"], request["body"], request["headers"])
    (delivery,) = deliveries_of(client, headers, hook["id"])
    assert delivery["status"] == "succeeded"
    assert delivery["attempt_count"] == 3
    assert delivery["last_status_code"] == 200
    assert delivery["delivered_at"] is not None and delivery["next_attempt_at"] is None
    full = detail(client, headers, hook["id"], delivery["id"])
    assert [a["status_code"] for a in full["attempts"]] == [500, 500, 200]
    assert full["attempts"][0]["error"] == "The endpoint answered HTTP 500."
    assert full["attempts"][2]["error"] is None
    assert all(isinstance(a["duration_ms"], int) and a["attempted_at"] for a in full["attempts"])


def test_the_end_of_the_schedule_fails_the_delivery(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    (event_id,) = emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
    receiver.script[event_id] = [503] * 10
    deliver(hooks_app)
    # schedule "0,0,0": four attempts, then failed for good
    assert len(receiver.requests) == 4
    (delivery,) = deliveries_of(client, headers, hook["id"], status="failed")
    assert delivery["attempt_count"] == 4 and delivery["last_status_code"] == 503
    assert delivery["next_attempt_at"] is None and delivery["delivered_at"] is None
    assert deliveries_of(client, headers, hook["id"], status="pending") == []
    deliver(hooks_app)
    assert len(receiver.requests) == 4  # nothing more


def test_default_schedule_waits_before_the_next_attempt(hooks_app, client, headers, receiver):
    hooks_app.config["WEBHOOK_RETRY_SCHEDULE"] = "5,300,1800,7200,18000,36000,36000"
    hook = create_webhook(client, headers, receiver.url)
    (event_id,) = emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
    receiver.script[event_id] = [500]
    deliver(hooks_app)
    assert len(receiver.requests) == 1
    (delivery,) = deliveries_of(client, headers, hook["id"])
    assert delivery["status"] == "pending" and delivery["attempt_count"] == 1
    row = WebhookDelivery.get_by_id(delivery["id"])
    attempt = WebhookAttempt.get(WebhookAttempt.delivery_id == row.id)
    assert 4_900 <= row.next_attempt_at - attempt.attempted_at <= 6_000


def test_retry_after_is_honoured(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    (event_id,) = emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
    receiver.script[event_id] = [(429, {"Retry-After": "120"})]
    deliver(hooks_app)
    assert len(receiver.requests) == 1  # schedule says 0 s, the receiver asked for 120 s
    row = WebhookDelivery.get(WebhookDelivery.endpoint_id == hook["id"])
    attempt = WebhookAttempt.get(WebhookAttempt.delivery_id == row.id)
    assert row.status == "pending" and row.last_status_code == 429
    assert 119_000 <= row.next_attempt_at - attempt.attempted_at <= 121_000


def test_410_disables_the_endpoint(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    first, second = emit_events(
        headers["X-Tenant-ID"], [("order.created", "ord_1", {}), ("order.created", "ord_1", {})]
    )
    receiver.script[first] = [410]
    deliver(hooks_app)
    assert [r["headers"]["webhook-id"] for r in receiver.requests] == [first]
    shown = client.get(f"/api/webhooks/{hook['id']}", headers=headers).get_json()["data"]
    assert shown["is_active"] is False
    assert "410" in shown["disabled_reason"]
    statuses = {d["event_id"]: d for d in deliveries_of(client, headers, hook["id"])}
    assert statuses[first]["status"] == "failed" and statuses[first]["attempt_count"] == 1
    assert statuses[second]["status"] == "failed" and statuses[second]["attempt_count"] == 0
    # a disabled endpoint gets nothing new
    emit_events(headers["X-Tenant-ID"], [("order.updated", "ord_2", {})])
    deliver(hooks_app)
    assert len(receiver.requests) == 1
    # re-activation clears the reason; later events flow again
    response = client.patch(
        f"/api/webhooks/{hook['id']}", json={"is_active": True}, headers=headers
    )
    assert response.get_json()["data"]["disabled_reason"] is None
    emit_events(headers["X-Tenant-ID"], [("order.updated", "ord_3", {})])
    deliver(hooks_app)
    assert len(receiver.requests) == 2


def test_redelivered_event_verifies(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    (event_id,) = emit_events(headers["X-Tenant-ID"], [("order.shipped", "ord_1", {"x": 1})])
    deliver(hooks_app)
    (original,) = deliveries_of(client, headers, hook["id"])
    response = client.post(
        f"/api/webhooks/{hook['id']}/deliveries/{original['id']}/redeliver", headers=headers
    )
    assert response.status_code == 202
    queued = response.get_json()["data"]
    assert queued["id"] != original["id"] and queued["status"] == "pending"
    assert queued["event_id"] == event_id and queued["redelivery_of"] == original["id"]
    deliver(hooks_app)
    first, again = receiver.requests
    assert again["headers"]["X-Service-Delivery"] == queued["id"]
    assert again["headers"]["webhook-id"] == event_id == first["headers"]["webhook-id"]
    assert again["body"] == first["body"]
    assert verify_stdlib(hook["secret"], again["body"], again["headers"])
    assert verify_library(hook["secret"], again["body"], again["headers"])
    assert detail(client, headers, hook["id"], queued["id"])["status"] == "succeeded"


def test_after_rotation_the_new_secret_signs(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    response = client.post(f"/api/webhooks/{hook['id']}/rotate-secret", headers=headers)
    assert response.status_code == 200
    rotated = response.get_json()["data"]
    new_secret = rotated["secret"]
    assert new_secret != hook["secret"] and new_secret.startswith("whsec_")
    assert rotated["id"] == hook["id"]
    emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
    deliver(hooks_app)
    (request,) = receiver.requests
    body, sent = request["body"], request["headers"]
    assert verify_stdlib(new_secret, body, sent)
    assert verify_library(new_secret, body, sent)
    # X-Service-Signature: the new secret only; webhook-signature: the old one too (grace)
    old_github = verify_stdlib(hook["secret"], body, {**sent, "webhook-signature": "v1,x"})
    assert not old_github
    assert verify_library(hook["secret"], body, sent)
    assert len(sent["webhook-signature"].split(" ")) == 2


def test_without_grace_the_old_secret_stops_at_once(hooks_app, client, headers, receiver):
    hooks_app.config["WEBHOOK_SECRET_GRACE_SECONDS"] = 0
    try:
        hook = create_webhook(client, headers, receiver.url)
        client.post(f"/api/webhooks/{hook['id']}/rotate-secret", headers=headers)
        emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
        deliver(hooks_app)
        (request,) = receiver.requests
        assert len(request["headers"]["webhook-signature"].split(" ")) == 1
        try:
            verify_library(hook["secret"], request["body"], request["headers"])
            raise AssertionError("the old secret still verifies")
        except Exception as exc:
            assert type(exc).__name__ == "WebhookVerificationError"
    finally:
        hooks_app.config["WEBHOOK_SECRET_GRACE_SECONDS"] = 86400


def test_events_filter_and_events_before_the_endpoint(hooks_app, client, headers, receiver):
    tenant_id = headers["X-Tenant-ID"]
    emit_events(tenant_id, [("order.created", "ord_0", {})])  # before any endpoint
    hook = create_webhook(client, headers, receiver.url, events=["order.shipped"])
    every = Receiver()
    with every:
        create_webhook(client, headers, every.url, events=["*"])
        emit_events(tenant_id, [("order.created", "ord_1", {}), ("order.shipped", "ord_1", {})])
        deliver(hooks_app)
        assert [b["type"] for b in every.bodies()] == ["order.created", "order.shipped"]
    assert [b["type"] for b in receiver.bodies()] == ["order.shipped"]
    assert len(deliveries_of(client, headers, hook["id"])) == 1


def test_an_unreachable_receiver_is_a_failed_attempt(hooks_app, client, headers):
    from tests.support.servers import free_port

    hook = create_webhook(client, headers, f"http://127.0.0.1:{free_port()}/gone")
    emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
    deliver(hooks_app)
    (delivery,) = deliveries_of(client, headers, hook["id"])
    assert delivery["status"] == "failed" and delivery["attempt_count"] == 4
    assert delivery["last_status_code"] is None
    assert delivery["last_error"].startswith("Connection failed")


def test_redirects_are_not_followed(hooks_app, client, headers):
    target = Receiver()
    with target, Receiver(lambda record: (302, {"Location": target.url})) as redirecting:
        hook = create_webhook(client, headers, redirecting.url)
        emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
        deliver(hooks_app)
        assert target.requests == []
        assert len(redirecting.requests) == 4
    (delivery,) = deliveries_of(client, headers, hook["id"])
    assert delivery["status"] == "failed" and delivery["last_status_code"] == 302


def test_a_slow_receiver_times_out(hooks_app, client, headers):
    import time

    hooks_app.config["WEBHOOK_TIMEOUT_SECONDS"] = 0.5
    hooks_app.config["WEBHOOK_RETRY_SCHEDULE"] = ""

    def slow(record):
        time.sleep(1.5)
        return 200, {}

    with Receiver(slow) as server:
        hook = create_webhook(client, headers, server.url)
        emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
        deliver(hooks_app)
    (delivery,) = deliveries_of(client, headers, hook["id"])
    assert delivery["status"] == "failed"
    assert "within 0.5 s" in delivery["last_error"]
    assert WebhookEndpoint.get_by_id(hook["id"]).is_active


def test_the_readme_receiver_verifies_real_deliveries(hooks_app, client, headers, receiver):
    import os
    import re

    with open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")) as handle:
        readme = handle.read()
    section = readme.split("## Webhooks", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 (our own README)
    verify = namespace["verify"]
    hook = create_webhook(client, headers, receiver.url)
    emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {"a": "é"})])
    deliver(hooks_app)
    (request,) = receiver.requests
    assert verify(hook["secret"], request["body"], request["headers"])
    # the Standard Webhooks headers decide when they are there
    without_github = {**request["headers"], "X-Service-Signature": "sha256=00"}
    assert verify(hook["secret"], request["body"], without_github)
    bad_standard = {**request["headers"], "webhook-signature": "v1,AAAA"}
    assert not verify(hook["secret"], request["body"], bad_standard)
    assert not verify(hook["secret"], request["body"] + b" ", request["headers"])
    # a replay an hour later is refused, although the GitHub-style signature still holds
    stale = str(int(request["headers"]["webhook-timestamp"]) - 3600)
    assert not verify(
        hook["secret"], request["body"], {**request["headers"], "webhook-timestamp": stale}
    )
    # a receiver without the Standard Webhooks headers checks the GitHub-style one
    github_only = {
        name: value for name, value in request["headers"].items() if not name.startswith("webhook-")
    }
    assert verify(hook["secret"], request["body"], github_only)
    assert not verify(hook["secret"], request["body"] + b" ", github_only)
