"""What is sent: the test event, internal jobs kept silent; and the failing-endpoint
cut-off (with a shortened setting)."""

import dataclasses

from commerce_api.db import write_transaction
from commerce_api.events.models import Event
from commerce_api.jobs.errors import JobFailed
from commerce_api.jobs.services import enqueue_job
from commerce_api.webhooks import endpoint_health
from commerce_api.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.support import jobs_support, webhooks_support
from tests.support.jobs_support import register_handler, run_worker
from tests.support.waiting import wait_for
from tests.support.webhooks_support import (
    Receiver,
    create_webhook,
    deliver,
    delivering,
    emit_events,
    verify_library,
)

hooks_app = webhooks_support.hooks_app
jobs_app = jobs_support.jobs_app
receiver = webhooks_support.receiver


# The test event -----------------------------------------------------------------------------


def test_the_test_event_goes_to_that_endpoint_alone_signed(hooks_app, client, headers):
    with Receiver() as one, Receiver() as other:
        hook = create_webhook(client, headers, one.url, events=["order.shipped"])
        create_webhook(client, headers, other.url)  # "*": would take any fanned-out event
        response = client.post(f"/api/webhooks/{hook['id']}/test", headers=headers)
        assert response.status_code == 202, response.get_json()
        delivery_id = response.get_json()["data"]["delivery_id"]
        assert delivery_id.startswith("dlv_")
        deliver(hooks_app)
        assert other.requests == []
        (request,) = one.requests

    payload = verify_library(hook["secret"], request["body"], request["headers"])
    assert payload["type"] == "webhook.test"
    assert payload["tenant_id"] == headers["X-Tenant-ID"]
    assert payload["data"]["webhook_id"] == hook["id"]
    assert request["headers"]["X-Service-Event"] == "webhook.test"
    assert request["headers"]["X-Service-Delivery"] == delivery_id
    detail = client.get(f"/api/webhooks/{hook['id']}/deliveries/{delivery_id}", headers=headers)
    assert detail.get_json()["data"]["status"] == "succeeded"
    assert detail.get_json()["data"]["event_type"] == "webhook.test"
    assert WebhookDelivery.select().count() == 1


def test_the_test_event_of_a_disabled_or_unknown_endpoint_is_refused(
    hooks_app, client, headers, receiver
):
    hook = create_webhook(client, headers, receiver.url)
    client.patch(f"/api/webhooks/{hook['id']}", json={"is_active": False}, headers=headers)
    refused = client.post(f"/api/webhooks/{hook['id']}/test", headers=headers)
    assert refused.status_code == 409
    assert refused.get_json()["error"]["code"] == "WEBHOOK_DISABLED"
    missing = client.post("/api/webhooks/whk_01JD3Q9Z7G0000000000000000/test", headers=headers)
    assert missing.status_code == 404
    assert missing.get_json()["error"]["code"] == "WEBHOOK_NOT_FOUND"
    assert Event.select().count() == 0 and WebhookDelivery.select().count() == 0


def test_an_endpoint_cannot_subscribe_to_the_test_event(client, headers):
    response = client.post(
        "/api/webhooks",
        json={"url": "https://example.com/hooks", "events": ["webhook.test"]},
        headers=headers,
    )
    assert response.status_code == 422
    assert "events" in response.get_json()["error"]["details"]["fields"]


# Internal jobs are silent ---------------------------------------------------------------------


class _Done:
    @staticmethod
    def run(job, ctx):
        return {"ok": True}


class _Fails:
    @staticmethod
    def run(job, ctx):
        raise JobFailed("BROKEN", "It broke.")


def test_internal_jobs_emit_no_events_and_dispatched_ones_do(
    hooks_app, jobs_app, client, headers, receiver
):
    tenant_id = headers["X-Tenant-ID"]
    create_webhook(client, headers, receiver.url)  # ["*"]
    register_handler("test_internal_done", _Done, internal=True)
    register_handler("test_internal_fails", _Fails, internal=True)
    register_handler("test_public_fails", _Fails)
    # the registry's flag decides, whatever the row says; and the real internal types
    quiet = [
        enqueue_job(tenant_id, "test_internal_done", {}).id,
        enqueue_job(tenant_id, "test_internal_fails", {}).id,
        enqueue_job(tenant_id, "marketplace_sync", {"sku": "NONE"}, internal=True).id,
        enqueue_job(tenant_id, "order_pull", {"connection_id": "mkc_none"}, internal=True).id,
        enqueue_job(tenant_id, "order_cancellation", {"order_id": "ord_none"}, internal=True).id,
    ]
    dispatched = client.post(
        "/api/ai-jobs", json={"type": "test_task", "params": {}}, headers=headers
    )
    assert dispatched.status_code == 201, dispatched.get_json()
    loud = [dispatched.get_json()["data"]["id"], enqueue_job(tenant_id, "test_public_fails", {}).id]
    run_worker(jobs_app)
    deliver(hooks_app)

    events = {
        (e.type, e.resource_id) for e in Event.select().where(Event.type.startswith("ai_job."))
    }
    assert events == {("ai_job.completed", loud[0]), ("ai_job.failed", loud[1])}
    received = {(b["type"], b["data"]["id"]) for b in receiver.bodies()}
    assert received == events
    assert not {job_id for _, job_id in received} & set(quiet)


def test_the_test_event_and_internal_jobs_meet_order(hooks_app, client, headers, receiver):
    """A test event neither waits behind nor holds back a resource's ordered deliveries."""
    hooks_app.config["WEBHOOK_RETRY_SCHEDULE"] = "30"
    hook = create_webhook(client, headers, receiver.url)
    (first,) = emit_events(headers["X-Tenant-ID"], [("order.updated", "ord_1", {"n": 1})])
    receiver.script[first] = [500]  # retried in 30 s: ord_1's later events wait
    emit_events(headers["X-Tenant-ID"], [("order.updated", "ord_1", {"n": 2})])
    deliver(hooks_app)
    client.post(f"/api/webhooks/{hook['id']}/test", headers=headers)
    deliver(hooks_app)
    types = [b["type"] for b in receiver.bodies()]
    assert types == ["order.updated", "webhook.test"]


# The failing-endpoint cut-off ----------------------------------------------------------------


def test_an_endpoint_failing_longer_than_the_cut_off_is_disabled(
    hooks_app, client, headers, monkeypatch
):
    hooks_app.config["WEBHOOK_RETRY_SCHEDULE"] = ",".join(["0.3"] * 20)
    monkeypatch.setitem(hooks_app.config, "WEBHOOK_DISABLE_AFTER_DAYS", 1.5 / 86400)  # 1.5 s
    tenant_id = headers["X-Tenant-ID"]
    with Receiver(lambda record: (500, {})) as failing, Receiver() as healthy:
        bad = create_webhook(client, headers, failing.url)
        good = create_webhook(client, headers, healthy.url)
        emit_events(tenant_id, [("order.created", f"ord_{n}", {}) for n in range(3)])

        def disabled():
            return not client.get(f"/api/webhooks/{bad['id']}", headers=headers).get_json()["data"][
                "is_active"
            ]

        def settled():
            pending = WebhookDelivery.select().where(
                (WebhookDelivery.endpoint_id == bad["id"]) & (WebhookDelivery.status == "pending")
            )
            return not pending.exists()

        with delivering(hooks_app):
            assert wait_for(disabled, timeout=30)
            # one being sent at that moment fails when it comes back (it is not sent again)
            assert wait_for(settled, timeout=10)
            first = min(r["received_at"] for r in failing.requests)
            last = max(r["received_at"] for r in failing.requests)
        attempts = len(failing.requests)

    shown = client.get(f"/api/webhooks/{bad['id']}", headers=headers).get_json()["data"]
    assert shown["disabled_reason"] == "failing"
    # it failed that long before the cut-off: counted from the first attempt's start to the
    # recording of the last failure, so the receiver's own clock may see up to one retry
    # interval plus a loaded machine's send latency less
    assert last - first >= 1.5 - 0.5
    assert attempts > 3  # retried meanwhile, as the schedule says
    kept = client.get(f"/api/webhooks/{good['id']}", headers=headers).get_json()["data"]
    assert kept["is_active"] is True and kept["disabled_reason"] is None
    statuses = {
        d.status for d in WebhookDelivery.select().where(WebhookDelivery.endpoint_id == bad["id"])
    }
    assert statuses == {"failed"}
    assert len(healthy.requests) == 3
    # re-activated, it starts afresh: one more failure does not disable it again
    client.patch(f"/api/webhooks/{bad['id']}", json={"is_active": True}, headers=headers)
    assert WebhookEndpoint.get_by_id(bad["id"]).failing_since is None
    hooks_app.config["WEBHOOK_RETRY_SCHEDULE"] = ""
    with Receiver(lambda record: (500, {})) as failing_again:
        client.patch(f"/api/webhooks/{bad['id']}", json={"url": failing_again.url}, headers=headers)
        emit_events(tenant_id, [("order.created", "ord_9", {})])
        deliver(hooks_app)
        assert len(failing_again.requests) == 1
    again = client.get(f"/api/webhooks/{bad['id']}", headers=headers).get_json()["data"]
    assert again["is_active"] is True


@dataclasses.dataclass
class _Delivery:
    endpoint_id: str


@dataclasses.dataclass
class _Outcome:
    delivery: _Delivery
    attempted_at: int
    status_code: int | None
    sent: bool = True
    given_back: bool = False

    @property
    def succeeded(self):
        return self.status_code == 200


def test_the_failing_run_begins_at_the_first_failure_after_the_last_success(
    hooks_app, client, headers
):
    ids = [create_webhook(client, headers, f"https://example.com/{n}")["id"] for n in range(4)]

    def run(*outcomes, now=10_000, limit=None):
        with write_transaction():
            disabled = endpoint_health.update(
                [_Outcome(_Delivery(ids[e]), at, code) for e, at, code in outcomes], now, limit
            )
        since = {n: WebhookEndpoint.get_by_id(i).failing_since for n, i in enumerate(ids)}
        return since, disabled

    since, _ = run((0, 100, 500), (1, 100, 500), (1, 200, 200), (2, 100, 200), (2, 300, 503))
    assert since == {0: 100, 1: None, 2: 300, 3: None}
    since, _ = run((0, 400, None), (2, 500, 200))  # a run already going keeps its start
    assert since == {0: 100, 1: None, 2: None, 3: None}
    since, disabled = run((0, 600, 500), (3, 600, 500), now=1_100, limit=1_000)
    assert disabled == {ids[0]: "every attempt failed for too long."}
    endpoint = WebhookEndpoint.get_by_id(ids[0])
    assert (endpoint.is_active, endpoint.disabled_reason) == (False, "failing")
    assert WebhookEndpoint.get_by_id(ids[3]).is_active  # failing since 600 only
