"""The event catalogue: every event type, when it is sent, and an example body.

The README's catalogue, the OpenAPI document (the ``events`` enum and the callback of
``POST /api/webhooks``) and the tests are made from this table. ``data`` is the resource
as its API shows it (orders and products add ``changed_fields`` to their ``*.updated``
events)."""

from typing import Any

from .models import EVENT_TYPES

# sent only by POST /api/webhooks/:id/test, to that endpoint alone: nobody subscribes to it
SUBSCRIBABLE = tuple(t for t in EVENT_TYPES if t != "webhook.test")

TENANT = "3f1c2a9e-8d4b-4f6a-9c2e-5b7d1e0a4c33"
AT = "2026-11-22T10:04:05.123Z"

_PRODUCT = {
    "id": "prod_01JD3Q9Z7G6W1B2C3D4E5F6G7H",
    "sku": "MUG-ENAMEL-WHT",
    "title": "Enamel mug, white, 350 ml",
    "description": None,
    "status": "active",
    "gtin": "4006380000018",
    "category": "kitchen",
    "cost_price": 6.9,
    "weight_kg": None,
    "images": ["https://images.example.com/mug-enamel-wht.jpg"],
    "created_at": AT,
    "updated_at": AT,
    "components": [],
}
_ORDER = {
    "id": "ord_01JD3QA1B2C3D4E5F6G7H8J9KM",
    "external_order_id": "SBX-000001",
    "marketplace": "amazon",
    "status": "pending",
    "fulfillment_method": "FBM",
    "total_amount": 20.7,
    "currency": "USD",
    "created_at": AT,
    "updated_at": AT,
    "has_returns": False,
    "stock_shortage": False,
    "line_items": [
        {
            "external_line_item_id": "SBX-000001-1",
            "sku": "MUG-ENAMEL-WHT",
            "title": "Enamel mug, white, 350 ml",
            "quantity": 3,
            "unit_price": 6.9,
            "line_total": 20.7,
            "shipped_quantity": 0,
        }
    ],
    "shipment": None,
    "cancellation": None,
}
_CANCELLATION = {
    "status": "requested",
    "reason": "customer_request",
    "requested_at": AT,
    "requested_by": "ops@example.com",
    "decided_at": None,
    "message": None,
    "job_id": "job_01JD3QB5N6P7Q8R9S0T1V2W3XY",
}
_RECOMMENDATION = {
    "id": "rec_01JD3QC7D8E9F0G1H2J3K4M5NP",
    "sku": "MUG-ENAMEL-WHT",
    "marketplace": "amazon",
    "current_price": 12.99,
    "recommended_price": 12.49,
    "delta": -0.5,
    "delta_pct": -3.85,
    "buy_box_win_probability": 0.72,
    "estimated_margin": 5.59,
    "confidence": 0.8,
    "reasoning": "Undercut the lowest competitor (12.59) by 0.10, above the margin floor.",
    "status": "pending",
    "reference_price": 12.59,
    "rule_ids": ["rule_01JD3QD1E2F3G4H5J6K7M8N9PQ"],
    "job_id": "job_01JD3QE2F3G4H5J6K7M8N9P0QR",
    "created_at": AT,
    "applied_at": None,
    "dismissed_at": None,
}
_JOB = {
    "id": "job_01JD3QF3G4H5J6K7M8N9P0Q1RS",
    "type": "review_sentiment",
    "status": "completed",
    "priority": "normal",
    "params": {"skus": ["MUG-ENAMEL-WHT"]},
    "attempts": 1,
    "created_at": AT,
    "estimated_completion_at": "2026-11-22T10:05:20.123Z",
    "started_at": "2026-11-22T10:04:05.480Z",
    "progress": {"done": 1, "total": 1},
    "completed_at": "2026-11-22T10:04:07.902Z",
    "duration_seconds": 2,
    "result": {
        "review_count": 2,
        "overall": {"positive": 1, "neutral": 0, "negative": 1, "average_score": 0.05},
        "by_sku": [],
        "reviews": [],
    },
}
_FAILED_JOB = {
    key: value for key, value in _JOB.items() if key not in ("completed_at", "result", "progress")
} | {
    "status": "failed",
    "type": "llm_visibility_score",
    "params": {"skus": ["MUG-ENAMEL-WHT"]},
    "attempts": 4,
    "error": {
        "code": "LLM_UNAVAILABLE",
        "message": "The assistant did not answer.",
        "retry_count": 3,
    },
    "failed_at": "2026-11-22T10:09:41.007Z",
}
_FAILED_JOB.pop("duration_seconds")
_TRANSFER = {
    "id": "trf_01JD3QN9P0Q1R2S3T4V5W6X7YZ",
    "status": "draft",
    "from_warehouse_id": "wh_01JD3QH5J6K7M8N9P0Q1R2S3TV",
    "to_warehouse_id": "wh_01JD3QP0Q1R2S3T4V5W6X7Y8Z0",
    "reference": "DN-2026-118",
    "lines": [
        {
            "sku": "MUG-ENAMEL-WHT",
            "quantity": 40,
            "received_quantity": 0,
            "returned_quantity": 0,
            "in_transit_quantity": 0,
        }
    ],
    "created_by": "key:key_01JD3QJ6K7M8N9P0Q1R2S3T4VW",
    "created_at": AT,
    "updated_at": AT,
    "shipped_at": None,
    "received_at": None,
    "cancelled_at": None,
}
_TRANSFER_LINE = _TRANSFER["lines"][0]

CATALOGUE = {
    "order.created": (
        "An order was imported or pulled from its marketplace.",
        _ORDER,
    ),
    "order.updated": (
        "An order changed (status, shipment, cancellation decision, returns);"
        " `changed_fields` names what changed.",
        _ORDER | {"status": "confirmed", "changed_fields": ["status"]},
    ),
    "order.shipped": (
        "An order's shipment was confirmed (every line shipped).",
        _ORDER
        | {
            "status": "shipped",
            "line_items": [_ORDER["line_items"][0] | {"shipped_quantity": 3}],
            "shipment": {
                "carrier": "DHL",
                "tracking_number": "00340434161234567890",
                "shipped_date": AT,
                "line_items": [{"external_line_item_id": "SBX-000001-1", "quantity": 3}],
            },
            "changed_fields": ["status"],
        },
    ),
    "order.cancellation_requested": (
        "A cancellation was requested; the marketplace decides it (a later"
        " `order.cancelled` or `order.updated`).",
        _ORDER | {"cancellation": _CANCELLATION},
    ),
    "order.cancelled": (
        "An order was cancelled; its reserved stock is released.",
        _ORDER
        | {
            "status": "cancelled",
            "cancellation": _CANCELLATION | {"status": "approved", "decided_at": AT},
        },
    ),
    "product.created": ("A product was created.", _PRODUCT),
    "product.updated": (
        "A product changed; `changed_fields` names what changed.",
        _PRODUCT | {"title": "Enamel mug, white, 350 ml, set of 2", "changed_fields": ["title"]},
    ),
    "product.archived": (
        "A product was archived (soft-deleted).",
        _PRODUCT | {"status": "archived"},
    ),
    "inventory.adjusted": (
        "A stock quantity changed: one ledger entry.",
        {
            "id": "adj_01JD3QG4H5J6K7M8N9P0Q1R2ST",
            "sku": "MUG-ENAMEL-WHT",
            "warehouse_id": "wh_01JD3QH5J6K7M8N9P0Q1R2S3TV",
            "quantity_type": "on_hand",
            "before_quantity": 0,
            "after_quantity": 140,
            "delta": 140,
            "reason": "supplier_receipt",
            "note": "Opening stock",
            "reference": None,
            "sequence": 1,
            "created_by": "key:key_01JD3QJ6K7M8N9P0Q1R2S3T4VW",
            "created_at": AT,
        },
    ),
    "inventory.status_changed": (
        "A SKU's stock status changed (`normal`, `low`, `critical`, `out_of_stock`).",
        {
            "sku": "MUG-ENAMEL-WHT",
            "previous_status": "out_of_stock",
            "status": "normal",
            "total_on_hand": 140,
            "total_reserved": 0,
            "total_available": 140,
            "safety_stock": 0,
        },
    ),
    "transfer.created": (
        "A transfer between two own warehouses was created (a draft: nothing moved yet).",
        _TRANSFER,
    ),
    "transfer.shipped": (
        "A transfer was shipped: its stock left the source (`transfer_out`) and is in"
        " transit (`incoming` of the destination).",
        _TRANSFER
        | {
            "status": "in_transit",
            "lines": [_TRANSFER_LINE | {"in_transit_quantity": 40}],
            "shipped_at": AT,
        },
    ),
    "transfer.received": (
        "Stock of a transfer was received into the destination (`transfer_in`), whole or"
        " partly; `receipt` lists what this receipt brought, `status` is `received` once"
        " every line is in.",
        _TRANSFER
        | {
            "status": "in_transit",
            "lines": [_TRANSFER_LINE | {"received_quantity": 25, "in_transit_quantity": 15}],
            "shipped_at": AT,
            "receipt": [{"sku": "MUG-ENAMEL-WHT", "quantity": 25}],
        },
    ),
    "transfer.cancelled": (
        "A transfer was cancelled; what was in transit went back to the source"
        " (`returned_quantity`).",
        _TRANSFER
        | {
            "status": "cancelled",
            "lines": [_TRANSFER_LINE | {"received_quantity": 25, "returned_quantity": 15}],
            "shipped_at": AT,
            "cancelled_at": AT,
        },
    ),
    "ai_job.completed": (
        "A job dispatched with `POST /api/ai-jobs` completed (internal jobs send nothing);"
        " a `params` or `result` over 64 KiB is left out and flagged `result_omitted: true`.",
        _JOB,
    ),
    "ai_job.failed": (
        "A job dispatched with `POST /api/ai-jobs` failed for good.",
        _FAILED_JOB,
    ),
    "pricing.recommendation.created": (
        "Repricing made a price recommendation.",
        _RECOMMENDATION,
    ),
    "pricing.recommendation.applied": (
        "A recommended price was pushed to the marketplace.",
        _RECOMMENDATION | {"status": "applied", "applied_at": AT},
    ),
    "listing.sync_failed": (
        "The marketplace rejected a push of a listing; the listing shows"
        " `sync_status: error` and `last_sync_error` until a later push succeeds.",
        {
            "sku": "MUG-ENAMEL-WHT",
            "marketplace": "amazon",
            "price": 12.99,
            "currency": "USD",
            "quantity": 140,
            "stock_buffer": 0,
            "status": "active",
            "sync_status": "error",
            "last_synced_at": "2026-11-21T18:30:00.000Z",
            "last_sync_error": "INVALID_GTIN: the marketplace does not know this GTIN.",
        },
    ),
    "webhook.test": (
        "Sent by `POST /api/webhooks/:id/test` to that endpoint alone; no endpoint"
        " subscribes to it.",
        {
            "webhook_id": "whk_01JD3QK7M8N9P0Q1R2S3T4V5WX",
            "message": "A test event sent by POST"
            " /api/webhooks/whk_01JD3QK7M8N9P0Q1R2S3T4V5WX/test.",
        },
    ),
}


def example_body(event_type: str) -> dict[str, Any]:
    """A whole delivered body ``{id, type, created_at, tenant_id, data}`` of the type."""
    return {
        "id": "evt_01JD3QM8N9P0Q1R2S3T4V5W6XY",
        "type": event_type,
        "created_at": AT,
        "tenant_id": TENANT,
        "data": CATALOGUE[event_type][1],
    }
