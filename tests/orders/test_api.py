"""The Orders API through HTTP: list and its filters, detail, shipment, cancel, bulk shipment."""

import pytest

from commerce_api.jobs.models import Job
from commerce_api.orders.models import Order
from tests.support.factories import headers_for
from tests.support.orders_support import (
    attempts,
    events_of,
    import_orders,
    ledger_totals,
    levels,
    open_reserved,
    order_body,
    run_job,
    snapshot,
)


@pytest.fixture
def catalogue(shop, runner, tenant, tmp_path):
    """Six orders with different statuses, methods, marketplaces, dates and returns."""
    orders = [
        order_body("A-1", created_at="2026-03-01T00:00:00.000Z"),
        order_body(
            "A-2",
            status="confirmed",
            fulfillment_method="FBA",
            created_at="2026-03-02T23:59:59.999Z",
        ),
        order_body(
            "A-3",
            status="delivered",
            created_at="2026-03-03T10:00:00.000Z",
            returns=[
                {
                    "sku": "MUG-1",
                    "quantity": 1,
                    "reason": "damaged",
                    "reason_text": "Chipped.",
                    "created_at": "2026-03-09T10:00:00Z",
                }
            ],
        ),
        order_body("E-1", marketplace="ebay", created_at="2026-03-04T00:00:00.000Z"),
        order_body(
            "A-4", fulfillment_method="FBS", status="processing", created_at="2026-03-05T08:00:00Z"
        ),
        order_body("A-5", status="cancelled", created_at="2026-02-28T23:59:59.999Z"),
    ]
    summary = import_orders(runner, tenant, tmp_path, orders)
    assert summary["created"] == 6
    return {item["external_order_id"]: item["id"] for item in summary["orders"]}


def _ids(response):
    assert response.status_code == 200, response.get_json()
    return [item["external_order_id"] for item in response.get_json()["data"]]


# List -------------------------------------------------------------------------------------


def test_list_default_sort_is_placement_time_desc(client, headers, catalogue):
    response = client.get("/api/orders", headers=headers)
    assert _ids(response) == ["A-4", "E-1", "A-3", "A-2", "A-1", "A-5"]
    body = response.get_json()
    assert body["meta"] == {"total": 6, "page": 1, "limit": 50, "nextCursor": None}
    first = body["data"][0]
    assert set(first) == {
        "id",
        "external_order_id",
        "marketplace",
        "status",
        "fulfillment_method",
        "total_amount",
        "currency",
        "created_at",
        "updated_at",
        "has_returns",
        "stock_shortage",
        "line_items",
    }
    assert first["created_at"] == "2026-03-05T08:00:00.000Z"
    assert first["total_amount"] == 25.0
    assert first["line_items"][0] == {
        "external_line_item_id": "A-4-L1",
        "sku": "MUG-1",
        "title": "Enamel mug",
        "quantity": 2,
        "unit_price": 7.5,
        "line_total": 15.0,
        "shipped_quantity": 0,
    }
    ascending = client.get("/api/orders?order=asc", headers=headers)
    assert _ids(ascending) == ["A-5", "A-1", "A-2", "A-3", "E-1", "A-4"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("status=pending", ["E-1", "A-1"]),
        ("status=confirmed", ["A-2"]),
        ("status=cancelled", ["A-5"]),
        ("status=shipped", []),
        ("marketplace=ebay", ["E-1"]),
        ("marketplace=amazon&status=pending", ["A-1"]),
        ("fulfillment_method=FBA", ["A-2"]),
        ("fulfillment_method=FBS", ["A-4"]),
        ("fulfillment_method=FBM", ["E-1", "A-3", "A-1", "A-5"]),
        ("has_returns=true", ["A-3"]),
        ("has_returns=false", ["A-4", "E-1", "A-2", "A-1", "A-5"]),
        # dates are inclusive, on placement time (UTC)
        ("start_date=2026-03-02", ["A-4", "E-1", "A-3", "A-2"]),
        ("end_date=2026-03-02", ["A-2", "A-1", "A-5"]),
        ("start_date=2026-03-01&end_date=2026-03-01", ["A-1"]),
        ("start_date=2026-02-28&end_date=2026-03-02", ["A-2", "A-1", "A-5"]),
        ("start_date=2026-03-06", []),
        ("start_date=2026-03-01&end_date=2026-03-04&fulfillment_method=FBM", ["E-1", "A-3", "A-1"]),
    ],
)
def test_list_filters(client, headers, catalogue, query, expected):
    response = client.get(f"/api/orders?{query}", headers=headers)
    assert _ids(response) == expected
    assert response.get_json()["meta"]["total"] == len(expected)


@pytest.mark.parametrize(
    "query",
    [
        "status=lost",
        "fulfillment_method=DHL",
        "start_date=yesterday",
        "end_date=2026-13-01",
        "start_date=2026-03-05&end_date=2026-03-01",
        "has_returns=maybe",
        "limit=0",
        "limit=201",
        "sort=total_amount",
        "color=red",
        "fields=id,secret",
    ],
)
def test_list_refuses_bad_query(client, headers, catalogue, query):
    response = client.get(f"/api/orders?{query}", headers=headers)
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "VALIDATION_ERROR"


def test_list_cursor_pagination_walks_every_order_once(client, headers, catalogue):
    seen, cursor, pages = [], None, 0
    while True:
        url = "/api/orders?limit=4" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(url, headers=headers).get_json()
        pages += 1
        assert body["meta"]["page"] == pages and body["meta"]["total"] == 6
        seen += [item["external_order_id"] for item in body["data"]]
        cursor = body["meta"]["nextCursor"]
        if cursor is None:
            break
    assert pages == 2
    assert seen == ["A-4", "E-1", "A-3", "A-2", "A-1", "A-5"]
    # a filtered list pages the same way
    first = client.get("/api/orders?limit=1&status=pending", headers=headers).get_json()
    second = client.get(
        f"/api/orders?limit=1&status=pending&cursor={first['meta']['nextCursor']}", headers=headers
    ).get_json()
    assert [first["data"][0]["external_order_id"], second["data"][0]["external_order_id"]] == [
        "E-1",
        "A-1",
    ]
    assert second["meta"]["nextCursor"] is None


def test_list_cursor_errors(client, headers, catalogue):
    response = client.get("/api/orders?cursor=not-a-cursor", headers=headers)
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "INVALID_CURSOR"
    cursor = client.get("/api/orders?limit=1", headers=headers).get_json()["meta"]["nextCursor"]
    # a cursor belongs to its sort, order and filters
    response = client.get(f"/api/orders?limit=1&order=asc&cursor={cursor}", headers=headers)
    assert response.get_json()["error"]["code"] == "INVALID_CURSOR"
    response = client.get(f"/api/orders?limit=1&status=pending&cursor={cursor}", headers=headers)
    assert response.get_json()["error"]["code"] == "INVALID_CURSOR"


def test_list_sort_by_updated_at_and_fields(client, headers, catalogue):
    response = client.get("/api/orders?sort=updated_at&order=asc", headers=headers)
    assert len(_ids(response)) == 6
    response = client.get("/api/orders?fields=status,marketplace&limit=1", headers=headers)
    assert response.get_json()["data"] == [
        {"id": catalogue["A-4"], "status": "processing", "marketplace": "amazon"}
    ]


def test_list_is_per_tenant_and_needs_orders_read(client, headers, catalogue):
    other = headers_for()
    assert _ids(client.get("/api/orders", headers=other)) == []
    reader = headers_for(scopes=["products:read"])
    response = client.get("/api/orders", headers=reader)
    assert response.status_code == 403
    assert response.get_json()["error"]["details"]["required_scope"] == "orders:read"


# Detail -----------------------------------------------------------------------------------


def test_detail_has_address_returns_and_sync_history(client, headers, catalogue):
    response = client.get(f"/api/orders/{catalogue['A-3']}", headers=headers)
    assert response.status_code == 200
    order = response.get_json()["data"]
    assert order["status"] == "delivered" and order["has_returns"] is True
    assert order["shipping_address"]["city"] == "London"
    assert order["shipping_address"]["postal_code"] == "SW1Y 4JH"
    assert order["shipment"] is None and order["cancellation"] is None
    (returned,) = order["returns"]
    assert returned["id"].startswith("ret_")
    assert returned == {
        "id": returned["id"],
        "sku": "MUG-1",
        "quantity": 1,
        "reason": "damaged",
        "reason_text": "Chipped.",
        "created_at": "2026-03-09T10:00:00.000Z",
    }
    (received,) = order["sync_history"]
    assert received["operation"] == "order_import" and received["direction"] == "inbound"
    assert received["status"] == "succeeded"
    selected = client.get(
        f"/api/orders/{catalogue['A-3']}?fields=returns,status", headers=headers
    ).get_json()["data"]
    assert set(selected) == {"id", "returns", "status"}


def test_detail_not_found_and_other_tenant(client, headers, catalogue):
    response = client.get("/api/orders/ord_missing", headers=headers)
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "ORDER_NOT_FOUND"
    response = client.get(f"/api/orders/{catalogue['A-1']}", headers=headers_for())
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "ORDER_NOT_FOUND"


# Shipment ---------------------------------------------------------------------------------


def test_shipment_ships_every_line_and_consumes_stock(client, headers, tenant, catalogue):
    order_id = catalogue["A-1"]
    assert levels(tenant.id, "MUG-1") == (10, 6)  # A-1, E-1 and A-4 (FBS) hold 2 each
    response = client.post(
        f"/api/orders/{order_id}/shipment",
        json={"carrier": "UPS", "tracking_number": "1Z999", "shipped_date": "2026-03-11T09:00:00Z"},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    order = response.get_json()["data"]
    assert order["status"] == "shipped"
    assert order["shipment"]["carrier"] == "UPS"
    assert order["shipment"]["tracking_number"] == "1Z999"
    assert order["shipment"]["shipped_date"] == "2026-03-11T09:00:00.000Z"
    assert order["shipment"]["confirmation_id"].startswith("SBX-SHP-")
    assert order["shipment"]["line_items"] == [
        {"external_line_item_id": "A-1-L1", "quantity": 2},
        {"external_line_item_id": "A-1-L2", "quantity": 1},
    ]
    assert [line["shipped_quantity"] for line in order["line_items"]] == [2, 1]
    assert order["sync_history"][0]["operation"] == "confirm_shipment"
    assert order["sync_history"][0]["status"] == "succeeded"
    # 2 mugs and 1 towel left the warehouse; the other orders still hold theirs
    assert levels(tenant.id, "MUG-1") == (8, 4)
    assert levels(tenant.id, "TOWEL-1") == (4, 2)
    assert ledger_totals(tenant.id, "MUG-1")[("on_hand", "sale")] == -2
    assert ledger_totals(tenant.id, "MUG-1")[("reserved", "sale")] == -2
    assert events_of(order_id)[-1] == "order.shipped"
    assert client.get(f"/api/orders/{order_id}", headers=headers).get_json()["data"] == order


def test_partial_shipment_consumes_what_ships_and_releases_the_rest(client, headers, tenant, shop):
    order_id = _import_one(client, headers, tenant, order_body("P-1"))
    response = client.post(
        f"/api/orders/{order_id}/shipment",
        json={
            "carrier": "DHL",
            "tracking_number": "JD01",
            "line_items": [{"external_line_item_id": "P-1-L1", "quantity": 1}],
        },
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    order = response.get_json()["data"]
    assert order["status"] == "shipped"
    assert [line["shipped_quantity"] for line in order["line_items"]] == [1, 0]
    assert levels(tenant.id, "MUG-1") == (9, 0)
    assert levels(tenant.id, "TOWEL-1") == (5, 0)
    assert open_reserved(tenant.id, "MUG-1") == 0 and open_reserved(tenant.id, "TOWEL-1") == 0


def _import_one(client, headers, tenant, body):
    from commerce_api.orders.ingest import upsert_order

    _, order_id = upsert_order(tenant.id, body, source="import", created_by="test")
    return order_id


def test_second_shipment_is_already_shipped(client, headers, catalogue):
    order_id = catalogue["A-1"]
    body = {"carrier": "UPS", "tracking_number": "1Z1"}
    assert (
        client.post(f"/api/orders/{order_id}/shipment", json=body, headers=headers).status_code
        == 200
    )
    before = snapshot()
    for target in (order_id, catalogue["A-3"]):  # shipped, and delivered
        response = client.post(f"/api/orders/{target}/shipment", json=body, headers=headers)
        assert response.status_code == 409
        assert response.get_json()["error"]["code"] == "ALREADY_SHIPPED"
    assert snapshot() == before


def test_shipment_of_cancelled_order_is_invalid_transition(client, headers, catalogue):
    before = snapshot()
    response = client.post(
        f"/api/orders/{catalogue['A-5']}/shipment",
        json={"carrier": "UPS", "tracking_number": "1Z1"},
        headers=headers,
    )
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "INVALID_STATUS_TRANSITION"
    assert snapshot() == before


def test_marketplace_rejection_changes_nothing_but_the_history(client, headers, tenant, catalogue):
    order_id = catalogue["A-1"]
    before, tried = snapshot(), len(attempts(order_id))
    response = client.post(
        f"/api/orders/{order_id}/shipment",
        json={"carrier": "UPS", "tracking_number": "REJECT-42"},
        headers=headers,
    )
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "MARKETPLACE_REJECTION"
    assert error["details"]["marketplace_code"] == "INVALID_TRACKING_NUMBER"
    assert snapshot() == before
    history = attempts(order_id)
    assert len(history) == tried + 1
    assert history[-1].status == "rejected" and history[-1].id == error["details"]["attempt_id"]
    detail = client.get(f"/api/orders/{order_id}", headers=headers).get_json()["data"]
    assert detail["status"] == "pending"
    assert detail["sync_history"][0]["status"] == "rejected"
    assert detail["sync_history"][0]["error"]["code"] == "INVALID_TRACKING_NUMBER"


def test_marketplace_unavailable_is_503_with_retry_after(client, headers, tenant, catalogue):
    order_id = catalogue["A-1"]
    before = snapshot()
    response = client.post(
        f"/api/orders/{order_id}/shipment",
        json={"carrier": "UPS", "tracking_number": "UNAVAILABLE-1"},
        headers=headers,
    )
    assert response.status_code == 503
    assert response.get_json()["error"]["code"] == "MARKETPLACE_UNAVAILABLE"
    assert int(response.headers["Retry-After"]) >= 1
    assert snapshot() == before
    assert attempts(order_id)[-1].status == "unavailable"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tracking_number": "1Z"}, "carrier"),
        ({"carrier": "UPS"}, "tracking_number"),
        ({"carrier": "", "tracking_number": "1Z"}, "carrier"),
        ({"carrier": "UPS", "tracking_number": "1Z", "shipped_date": "soon"}, "shipped_date"),
        ({"carrier": "UPS", "tracking_number": "1Z", "weight": 3}, "weight"),
        ({"carrier": "UPS", "tracking_number": "1Z", "line_items": []}, "line_items"),
        (
            {
                "carrier": "UPS",
                "tracking_number": "1Z",
                "line_items": [{"external_line_item_id": "A-1-L1"}],
            },
            "line_items",
        ),
        (
            {
                "carrier": "UPS",
                "tracking_number": "1Z",
                "line_items": [{"external_line_item_id": "nope", "quantity": 1}],
            },
            "line_items",
        ),
        (
            {
                "carrier": "UPS",
                "tracking_number": "1Z",
                "line_items": [{"external_line_item_id": "A-1-L1", "quantity": 3}],
            },
            "line_items",
        ),
        (
            {
                "carrier": "UPS",
                "tracking_number": "1Z",
                "line_items": [
                    {"external_line_item_id": "A-1-L1", "quantity": 1},
                    {"external_line_item_id": "A-1-L1", "quantity": 1},
                ],
            },
            "line_items",
        ),
        (
            {
                "carrier": "UPS",
                "tracking_number": "1Z",
                "line_items": [{"external_line_item_id": "A-1-L1", "quantity": "1"}],
            },
            "line_items",
        ),
    ],
)
def test_shipment_validation(client, headers, catalogue, body, field):
    before = snapshot()
    response = client.post(f"/api/orders/{catalogue['A-1']}/shipment", json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in error["details"]["fields"]
    assert snapshot() == before


def test_shipment_errors_not_found_scope_and_unconnected(client, headers, catalogue):
    body = {"carrier": "UPS", "tracking_number": "1Z"}
    response = client.post("/api/orders/ord_nope/shipment", json=body, headers=headers)
    assert response.status_code == 404 and response.get_json()["error"]["code"] == "ORDER_NOT_FOUND"
    response = client.post(
        f"/api/orders/{catalogue['A-1']}/shipment", json=body, headers=headers_for()
    )
    assert response.status_code == 404
    reader = headers_for(scopes=["orders:read"])
    response = client.post(f"/api/orders/{catalogue['A-1']}/shipment", json=body, headers=reader)
    assert response.status_code == 403
    # ebay is not connected: the confirmation cannot be pushed
    before = snapshot()
    response = client.post(f"/api/orders/{catalogue['E-1']}/shipment", json=body, headers=headers)
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "MARKETPLACE_NOT_CONNECTED"
    assert snapshot() == before
    response = client.post(
        f"/api/orders/{catalogue['A-1']}/shipment",
        data="{",
        headers={**headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400 and response.get_json()["error"]["code"] == "INVALID_JSON"


# Cancellation -----------------------------------------------------------------------------


def test_cancel_requests_then_marketplace_approves(client, headers, tenant, catalogue):
    order_id = catalogue["A-1"]
    assert levels(tenant.id, "MUG-1")[1] == 6
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "customer_request"}, headers=headers
    )
    assert response.status_code == 202, response.get_json()
    order = response.get_json()["data"]
    assert order["status"] == "pending"
    cancellation = order["cancellation"]
    assert cancellation["status"] == "requested"
    assert cancellation["reason"] == "customer_request"
    assert cancellation["requested_at"].endswith("Z")
    job = Job.get_by_id(cancellation["job_id"])
    assert (job.type, job.status, job.internal) == ("order_cancellation", "queued", True)
    assert events_of(order_id)[-1] == "order.cancellation_requested"
    # asking again while the request is on its way changes nothing
    again = client.post(f"/api/orders/{order_id}/cancel", json={"reason": "other"}, headers=headers)
    assert again.status_code == 202
    assert again.get_json()["data"]["cancellation"] == cancellation
    assert Job.select().where(Job.type == "order_cancellation").count() == 1

    result, failure = run_job(job.id)
    assert failure is None and result["outcome"] == "approved"
    order = client.get(f"/api/orders/{order_id}", headers=headers).get_json()["data"]
    assert order["status"] == "cancelled"
    assert order["cancellation"]["status"] == "approved"
    assert order["cancellation"]["decided_at"]
    assert order["sync_history"][0]["operation"] == "request_cancellation"
    assert order["sync_history"][0]["status"] == "succeeded"
    assert events_of(order_id)[-1] == "order.cancelled"
    # its 2 mugs are released; E-1 and A-4 still hold theirs
    assert levels(tenant.id, "MUG-1") == (10, 4)
    assert ledger_totals(tenant.id, "MUG-1")[("reserved", "release")] == -2
    # a cancelled order cannot be cancelled or shipped
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "other"}, headers=headers
    )
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "INVALID_STATUS_TRANSITION"


def test_cancel_rejected_by_marketplace_keeps_the_order(client, headers, tenant, shop):
    order_id = _import_one(client, headers, tenant, order_body("NOCANCEL-7"))
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "fraud_suspected"}, headers=headers
    )
    assert response.status_code == 202
    result, failure = run_job(response.get_json()["data"]["cancellation"]["job_id"])
    assert failure is None and result["outcome"] == "rejected"
    order = client.get(f"/api/orders/{order_id}", headers=headers).get_json()["data"]
    assert order["status"] == "pending"
    assert order["cancellation"]["status"] == "rejected"
    assert order["cancellation"]["reason"] == "fraud_suspected"
    assert levels(tenant.id, "MUG-1") == (10, 2)  # still reserved
    assert events_of(order_id)[-1] == "order.updated"
    # after a rejection the order can be shipped, or a cancellation asked again
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "other"}, headers=headers
    )
    assert response.status_code == 202
    assert response.get_json()["data"]["cancellation"]["status"] == "requested"


def test_cancel_with_marketplace_unreachable_retries_and_keeps_the_request(
    client, headers, tenant, shop
):
    order_id = _import_one(client, headers, tenant, order_body("UNAVAILABLE-9"))
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "out_of_stock"}, headers=headers
    )
    job_id = response.get_json()["data"]["cancellation"]["job_id"]
    before = snapshot()
    result, failure = run_job(job_id)
    assert result is None
    assert failure.code == "MARKETPLACE_UNAVAILABLE" and failure.retryable is True
    after = snapshot()
    assert after == before  # only the attempt row was written
    assert attempts(order_id)[-1].status == "unavailable"
    order = client.get(f"/api/orders/{order_id}", headers=headers).get_json()["data"]
    assert order["cancellation"]["status"] == "requested" and order["status"] == "pending"


def test_cancel_errors(client, headers, tenant, catalogue):
    before = snapshot()
    for body in (
        {},
        {"reason": "changed_my_mind"},
        {"reason": "other", "note": "x"},
        {"reason": 3},
    ):
        response = client.post(f"/api/orders/{catalogue['A-1']}/cancel", json=body, headers=headers)
        assert response.status_code == 422
        assert response.get_json()["error"]["code"] == "VALIDATION_ERROR"
    response = client.post(
        f"/api/orders/{catalogue['A-3']}/cancel", json={"reason": "other"}, headers=headers
    )
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "INVALID_STATUS_TRANSITION"
    response = client.post("/api/orders/ord_x/cancel", json={"reason": "other"}, headers=headers)
    assert response.status_code == 404
    response = client.post(
        f"/api/orders/{catalogue['E-1']}/cancel", json={"reason": "other"}, headers=headers
    )
    assert response.get_json()["error"]["code"] == "MARKETPLACE_NOT_CONNECTED"
    reader = headers_for(tenant, scopes=["orders:read"])
    response = client.post(
        f"/api/orders/{catalogue['A-1']}/cancel", json={"reason": "other"}, headers=reader
    )
    assert response.status_code == 403
    assert snapshot() == before


def test_shipment_waits_for_a_pending_cancellation(client, headers, catalogue):
    order_id = catalogue["A-1"]
    client.post(f"/api/orders/{order_id}/cancel", json={"reason": "other"}, headers=headers)
    before = snapshot()
    response = client.post(
        f"/api/orders/{order_id}/shipment",
        json={"carrier": "UPS", "tracking_number": "1Z"},
        headers=headers,
    )
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "INVALID_STATUS_TRANSITION"
    assert response.get_json()["error"]["details"]["cancellation"] == "requested"
    assert snapshot() == before


# Bulk shipment ----------------------------------------------------------------------------


def test_bulk_shipment_reports_each_item(client, headers, tenant, catalogue):
    shipments = [
        {"order_id": catalogue["A-1"], "carrier": "UPS", "tracking_number": "1Z1"},
        {"order_id": catalogue["A-3"], "carrier": "UPS", "tracking_number": "1Z2"},
        {"order_id": "ord_missing", "carrier": "UPS", "tracking_number": "1Z3"},
        {"order_id": catalogue["A-4"], "carrier": "UPS"},
        {"order_id": catalogue["A-2"], "carrier": "UPS", "tracking_number": "REJECT-1"},
        {"order_id": catalogue["A-1"], "carrier": "UPS", "tracking_number": "1Z1"},
        "not an object",
        {
            "order_id": catalogue["A-4"],
            "carrier": "DHL",
            "tracking_number": "JD1",
            "line_items": [{"external_line_item_id": "A-4-L2", "quantity": 1}],
        },
    ]
    response = client.post(
        "/api/orders/bulk-shipment", json={"shipments": shipments}, headers=headers
    )
    assert response.status_code == 200, response.get_json()
    data = response.get_json()["data"]
    assert data["succeeded"] == 2 and data["failed"] == 6
    assert [(e["index"], e["order_id"], e["code"]) for e in data["errors"]] == [
        (1, catalogue["A-3"], "ALREADY_SHIPPED"),
        (2, "ord_missing", "ORDER_NOT_FOUND"),
        (3, catalogue["A-4"], "VALIDATION_ERROR"),
        (4, catalogue["A-2"], "MARKETPLACE_REJECTION"),
        (5, catalogue["A-1"], "ALREADY_SHIPPED"),
        (6, None, "VALIDATION_ERROR"),
    ]
    assert all(e["message"] for e in data["errors"])
    statuses = {o.external_order_id: o.status for o in Order.select()}
    assert statuses["A-1"] == "shipped" and statuses["A-4"] == "shipped"
    assert statuses["A-2"] == "confirmed"
    # A-4 (FBS) shipped only its towel: 2 mugs released, 1 towel consumed
    assert levels(tenant.id, "TOWEL-1")[0] == 3


def test_bulk_shipment_limits(client, headers, catalogue):
    item = {"order_id": catalogue["A-1"], "carrier": "UPS", "tracking_number": "1Z"}
    before = snapshot()
    for body in ({"shipments": [item] * 101}, {"shipments": []}, {}, {"shipments": item}):
        response = client.post("/api/orders/bulk-shipment", json=body, headers=headers)
        assert response.status_code == 422
        assert response.get_json()["error"]["code"] == "VALIDATION_ERROR"
    assert snapshot() == before
    response = client.post(
        "/api/orders/bulk-shipment", json={"shipments": [item] * 100}, headers=headers
    )
    data = response.get_json()["data"]
    assert (data["succeeded"], data["failed"]) == (1, 99)
    reader = headers_for(scopes=["orders:read"])
    assert (
        client.post(
            "/api/orders/bulk-shipment", json={"shipments": [item]}, headers=reader
        ).status_code
        == 403
    )


# Products and open orders -----------------------------------------------------------------


def test_open_orders_block_archiving_their_products(client, headers, catalogue):
    response = client.delete("/api/products/TOWEL-1", headers=headers)
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "OPEN_ORDERS_EXIST"
    response = client.post(
        "/api/orders/bulk-shipment",
        json={
            "shipments": [
                {"order_id": catalogue[x], "carrier": "UPS", "tracking_number": f"1Z{x}"}
                for x in ("A-1", "A-2", "A-4")
            ]
        },
        headers=headers,
    )
    assert response.get_json()["data"]["succeeded"] == 3
    # E-1 (ebay, not connected) is still open
    assert client.delete("/api/products/TOWEL-1", headers=headers).status_code == 409
    Order.update(status="delivered").where(Order.external_order_id == "E-1").execute()
    assert client.delete("/api/products/TOWEL-1", headers=headers).status_code == 204
