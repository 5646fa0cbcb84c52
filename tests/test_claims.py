"""Claims (issue 19): one holder at a time, the lease frees a dead holder's claim, the
same token takes its own claim back; a cancellation and a shipment exclude each other."""

import pytest

from commerce_api.claims import OperationClaim, claim, claimed, lease_ms
from commerce_api.errors import ApiError
from commerce_api.jobs.models import Job
from commerce_api.orders.ingest import upsert_order
from tests.support.orders_support import (
    connect,
    make_own_warehouse,
    make_products,
    order_body,
    run_job,
    stock_up,
)


def test_one_holder_at_a_time_and_the_lease_frees_it(app, tenant, monkeypatch):
    first = claim(tenant.id, "ord_1", "confirm_shipment")
    with pytest.raises(ApiError) as busy:
        claim(tenant.id, "ord_1", "request_cancellation")
    assert (busy.value.code, busy.value.headers) == ("CONCURRENT_UPDATE", {"Retry-After": "1"})
    assert busy.value.details["operation"] == "confirm_shipment"  # what holds it
    # the holder died: once its lease ran out, the next one takes it
    OperationClaim.update(expires_at=first.expires_at - lease_ms() - 1).execute()
    second = claim(tenant.id, "ord_1", "confirm_shipment")
    first.release()  # too late: releases nothing of the new holder's
    assert OperationClaim.get().token == second.token


def test_the_same_token_takes_its_claim_back(app, tenant):
    claim(tenant.id, "rec_1", "apply_recommendation", token="job:1")
    again = claim(tenant.id, "rec_1", "apply_recommendation", token="job:1")
    assert OperationClaim.get().expires_at == again.expires_at
    with pytest.raises(ApiError):
        claim(tenant.id, "rec_1", "apply_recommendation", token="job:2")


def test_the_lease_outlives_the_marketplace_deadline(app, monkeypatch):
    monkeypatch.setitem(app.config, "CLAIM_LEASE_SECONDS", 1)
    monkeypatch.setitem(app.config, "MARKETPLACE_DEADLINE_SECONDS", 10)
    with app.app_context():
        assert lease_ms() == 11_000


def test_claimed_releases_when_the_block_fails(app, tenant):
    with pytest.raises(RuntimeError), claimed(tenant.id, "ord_2", "confirm_shipment"):
        raise RuntimeError("the marketplace call blew up")
    assert OperationClaim.select().count() == 0


@pytest.fixture
def order_id(client, headers, tenant):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", "sandbox")
    return upsert_order(tenant.id, order_body("M-1"), source="import")[1]


def test_a_cancellation_waits_for_a_shipment_in_flight(client, headers, tenant, order_id):
    shipment = claim(tenant.id, order_id, "confirm_shipment")  # a confirmation under way
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "customer_request"}, headers=headers
    )
    assert response.status_code == 409, response.get_json()
    assert response.get_json()["error"]["code"] == "CONCURRENT_UPDATE"
    assert response.headers["Retry-After"] == "1"
    assert Job.select().where(Job.type == "order_cancellation").count() == 0  # nothing queued
    shipment.release()
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "customer_request"}, headers=headers
    )
    assert response.status_code == 202
    job_id = response.get_json()["data"]["cancellation"]["job_id"]
    # the push waits while another holder has the order (a retryable failure)
    other = claim(tenant.id, order_id, "confirm_shipment")
    result, failure = run_job(job_id)
    assert (failure.code, failure.retryable) == ("CONCURRENT_UPDATE", True)
    other.release()
    result, failure = run_job(job_id)
    assert failure is None and result["outcome"] == "approved"
    assert OperationClaim.select().count() == 0
