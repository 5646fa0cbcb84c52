"""What generated clients need of the webhook callback (``webhooks/schemas.event_callbacks``
documents the event bodies on ``POST /api/webhooks``): an operationId, no security scheme
(deliveries are authenticated by their signature headers, declared here), and the 410
that disables the endpoint.
"""

WEBHOOK_CREATE_PATH = "/api/webhooks"

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
    """Complete each callback operation of ``POST /api/webhooks``."""
    operation = document["paths"][WEBHOOK_CREATE_PATH]["post"]
    for callback in operation.get("callbacks", {}).values():
        for item in callback.values():
            delivery = item["post"]
            delivery["operationId"] = "receiveWebhookEvent"
            delivery["security"] = []
            delivery["parameters"] = [
                {
                    "name": name,
                    "in": "header",
                    "required": True,
                    "description": description,
                    "schema": {"type": "string"},
                }
                for name, description in DELIVERY_HEADERS
            ]
            delivery["responses"].setdefault(
                "410", {"description": "Gone: the endpoint is disabled at once."}
            )
