"""The webhook event bodies in the OpenAPI document: ``callbacks`` on ``POST /api/webhooks``.

The worker POSTs ``{id, type, created_at, tenant_id, data}`` (``events/outbox.py``,
``serialize_event``) with the headers of ``webhooks/signing.py`` to the endpoint's URL.
"""

from ..events.models import EVENT_TYPES

WEBHOOK_CREATE_PATH = "/api/webhooks"

EVENT_SCHEMA = {
    "type": "object",
    "description": "The body of every webhook delivery. `data` is the resource as the API "
    "shows it when the event happened (an order, a product, an inventory record, a job, a "
    "price recommendation).",
    "properties": {
        "id": {"type": "string", "description": "The event id (`evt_...`)."},
        "type": {"type": "string", "enum": list(EVENT_TYPES)},
        "created_at": {"type": "string", "format": "date-time"},
        "tenant_id": {"type": "string"},
        "data": {"type": "object", "additionalProperties": True},
    },
    "required": ["id", "type", "created_at", "tenant_id", "data"],
}

DELIVERY_HEADERS = (
    ("X-Service-Event", "The event type."),
    ("X-Service-Delivery", "The delivery id (`dlv_...`), the same on every retry."),
    (
        "X-Service-Signature",
        "`sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the endpoint's secret.",
    ),  # fmt: skip
    ("webhook-id", "Standard Webhooks: the event id, the same on retries and redeliveries."),
    ("webhook-timestamp", "Standard Webhooks: Unix seconds of this attempt."),
    ("webhook-signature", "Standard Webhooks: `v1,<base64 signature>`, space-separated."),
)


def add_event_callbacks(document):
    """Document what the endpoint created by ``POST /api/webhooks`` receives."""
    document["components"]["schemas"]["WebhookEvent"] = EVENT_SCHEMA
    operation = document["paths"][WEBHOOK_CREATE_PATH]["post"]
    operation["callbacks"] = {
        "event": {
            "{$request.body#/url}": {
                "post": {
                    "summary": "An event, delivered to the endpoint",
                    "description": "Sent for each event type the endpoint subscribed to. A "
                    "2xx answer within 10 s is success; anything else is retried (410 "
                    "disables the endpoint).",
                    "operationId": "receiveWebhookEvent",
                    # authenticated by the signature headers, not by a security scheme
                    "security": [],
                    "parameters": [
                        {
                            "name": name,
                            "in": "header",
                            "required": True,
                            "description": description,
                            "schema": {"type": "string"},
                        }
                        for name, description in DELIVERY_HEADERS
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/WebhookEvent"}
                            }
                        },
                    },
                    "responses": {
                        "2XX": {"description": "Received."},
                        "410": {"description": "Gone: the endpoint is disabled."},
                    },
                }
            }
        }
    }
