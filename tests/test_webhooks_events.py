"""What is sent: the test event, internal jobs kept silent."""

from commerce_api.events.models import Event
from commerce_api.jobs.errors import JobFailed
from commerce_api.jobs.services import enqueue_job
from commerce_api.webhooks.models import WebhookDelivery

from . import jobs_support, webhooks_support
from .jobs_support import register_handler, run_worker
from .webhooks_support import Receiver, create_webhook, deliver, emit_events, verify_library

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
