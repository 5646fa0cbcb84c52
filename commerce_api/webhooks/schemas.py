"""Webhook request and response schemas."""

import marshmallow as ma

from ..events.catalogue import CATALOGUE, example_body
from ..events.models import EVENT_TYPES
from ..http.lists import (
    FieldsArgsSchema,
    ListArgsSchema,
    envelope_schema,
    fields_arg,
    list_schema,
)
from ..http.schemas import StrictSchema, Timestamp
from ..shapes import field_names
from .deliveries import DELIVERY_FIELDS
from .endpoints import ENDPOINT_FIELDS
from .models import DELIVERY_STATUSES
from .shapes import (
    DeliveryDetailSchema,
    DeliverySchema,
    WebhookSchema,
    WebhookWithSecretSchema,
    event_types_field,
)

DETAIL_DELIVERY_FIELDS = field_names(DeliveryDetailSchema)


def _strict_boolean(**kwargs):
    # only JSON true/false: "yes" or 1 is a wrong type
    return ma.fields.Boolean(truthy={True}, falsy={False}, **kwargs)


_URL_DOC = {
    "description": "An https:// (or http://) URL whose host resolves to public addresses.",
    "example": "https://example.com/hooks/commerce",
}
_EVENTS_DOC = {
    "description": 'Event types to receive, or `["*"]` for all of them (the README lists'
    " each type with an example body; so does this operation's callback).",
    "example": ["order.created", "order.shipped"],
}


class WebhookCreateSchema(StrictSchema):
    url = ma.fields.String(required=True, metadata=_URL_DOC)
    events = event_types_field(required=True, metadata=_EVENTS_DOC)
    description = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=500))


class WebhookUpdateSchema(StrictSchema):
    """Only the fields present change."""

    url = ma.fields.String(metadata=_URL_DOC)
    events = event_types_field(metadata=_EVENTS_DOC)
    description = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=500))
    is_active = _strict_boolean(
        metadata={"description": "false stops deliveries (pending ones fail); true resumes."}
    )


class RecoverSchema(StrictSchema):
    since = Timestamp(
        required=True,
        metadata={
            "description": "ISO 8601 timestamp: the events created at or after it (within "
            "`COMMERCE_WEBHOOK_RETENTION_DAYS`) that the endpoint has not received "
            "successfully are delivered again, each once.",
            "example": "2026-11-22T08:00:00.000Z",
        },
    )


class RecoverResultSchema(ma.Schema):
    webhook_id = ma.fields.String()
    since = ma.fields.String()
    queued = ma.fields.Integer(metadata={"description": "New deliveries queued."})
    pending = ma.fields.Integer(
        metadata={"description": "Deliveries already pending (retrying), made due now."}
    )


RecoverEnvelopeSchema = envelope_schema("RecoverEnvelopeSchema", RecoverResultSchema)


class WebhookListArgsSchema(ListArgsSchema):
    fields = fields_arg(ENDPOINT_FIELDS)
    is_active = ma.fields.Boolean(truthy={"true"}, falsy={"false"})


class WebhookFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(ENDPOINT_FIELDS)


class DeliveryFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(DETAIL_DELIVERY_FIELDS)


WebhookEnvelopeSchema = envelope_schema("WebhookEnvelopeSchema", WebhookSchema)


WebhookWithSecretEnvelopeSchema = envelope_schema(
    "WebhookWithSecretEnvelopeSchema", WebhookWithSecretSchema
)


WebhookListSchema = list_schema("WebhookListSchema", WebhookSchema)


class DeliveryListArgsSchema(ListArgsSchema):
    fields = fields_arg(DELIVERY_FIELDS)
    status = ma.fields.String(validate=ma.validate.OneOf(DELIVERY_STATUSES))


DeliveryEnvelopeSchema = envelope_schema("DeliveryEnvelopeSchema", DeliveryDetailSchema)


class WebhookTestSchema(ma.Schema):
    delivery_id = ma.fields.String(
        required=True,
        metadata={
            "description": "The delivery of the `webhook.test` event; follow it with"
            " `GET /api/webhooks/{webhook_id}/deliveries/{delivery_id}`.",
            "example": "dlv_01JD3Q9Z7G0000000000000000",
        },
    )


WebhookTestEnvelopeSchema = envelope_schema("WebhookTestEnvelopeSchema", WebhookTestSchema)


DeliveryListSchema = list_schema("DeliveryListSchema", DeliverySchema)


def event_callbacks():
    """The ``callbacks`` of ``POST /api/webhooks``: the body every delivery carries, with
    an example per event type (the catalogue)."""
    body = {
        "type": "object",
        "required": ["id", "type", "created_at", "tenant_id", "data"],
        "properties": {
            "id": {"type": "string", "description": "The event id (also `webhook-id`)."},
            "type": {"type": "string", "enum": list(EVENT_TYPES)},
            "created_at": {"type": "string", "format": "date-time"},
            "tenant_id": {"type": "string", "format": "uuid"},
            "data": {"type": "object", "description": "The resource, as its API shows it."},
        },
    }
    examples = {
        event_type.replace(".", "_"): {"summary": summary, "value": example_body(event_type)}
        for event_type, (summary, _) in CATALOGUE.items()
    }
    operation = {
        "summary": "A delivery of an event",
        "description": "Signed with `X-Service-Signature` and the Standard Webhooks headers"
        " (`webhook-id`, `webhook-timestamp`, `webhook-signature`). A 2xx answer within the"
        " time-out is success; anything else is retried on the schedule.",
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": body, "examples": examples}},
        },
        "responses": {"2XX": {"description": "Received."}},
    }
    return {"event": {"{$request.body#/url}": {"post": operation}}}
