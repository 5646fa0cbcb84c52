"""What a webhook endpoint and a delivery look like in answers: documented and serialized
from here."""

from typing import Any

import marshmallow as ma

from ..events.catalogue import SUBSCRIBABLE
from .endpoint_health import FAILING, GONE
from .models import DELIVERY_STATUSES


def event_types_field(**kwargs: Any) -> ma.fields.List:
    """The ``events`` list: its items are the subscribable types or ``*`` (checked by
    ``endpoints.check_events``, whose messages say which item is wrong)."""
    return ma.fields.List(ma.fields.String(metadata={"enum": [*SUBSCRIBABLE, "*"]}), **kwargs)


class WebhookSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "whk_01JD3Q9Z7G0000000000000000"})
    url = ma.fields.String()
    events = event_types_field()
    description = ma.fields.String(allow_none=True)
    is_active = ma.fields.Boolean()
    disabled_reason = ma.fields.String(
        allow_none=True,
        validate=ma.validate.OneOf((GONE, FAILING)),
        metadata={
            "description": "Why the service turned the endpoint off: it answered 410, or "
            "every attempt failed for too long (`failing`); null otherwise."
        },
    )
    status_reason = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "Why the service cannot use this endpoint now although it is"
            " active (`SECRET_KEY_MISMATCH: ...`: its stored secret cannot be decrypted with the"
            " service's keys; the operator must put the key back); null when it works."
        },
    )
    created_at = ma.fields.DateTime()
    updated_at = ma.fields.DateTime()


class WebhookWithSecretSchema(WebhookSchema):
    secret = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "Shown only here: `whsec_` + base64 of 32 random bytes. An"
            " idempotent replay of the answer shows null (a secret is shown once)."
        },
    )


class AttemptSchema(ma.Schema):
    attempted_at = ma.fields.DateTime()
    status_code = ma.fields.Integer(allow_none=True)
    duration_ms = ma.fields.Integer()
    error = ma.fields.String(allow_none=True)
    response_body = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "What the endpoint answered: the first 4 KiB (4,096 bytes) of the"
            " response body, as UTF-8 text (a character cut at the bound is dropped); an"
            " empty string for an empty body; null when there was no answer (a connection error, a"
            " time-out) or the body is not text (`response_body_binary`), and for attempts"
            " made before the service kept answers."
        },
    )
    response_body_size = ma.fields.Integer(
        allow_none=True,
        metadata={
            "description": "Bytes of the response body read (the service reads at most"
            " 64 KiB of an answer); more than 4,096: `response_body` is the start of it."
            " null when there was no answer."
        },
    )
    response_body_binary = ma.fields.Boolean(
        allow_none=True,
        metadata={
            "description": "true: the body is not UTF-8 text (or holds NUL bytes) and is not"
            " kept; null when there was no answer."
        },
    )


class DeliverySchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "dlv_01JD3Q9Z7G0000000000000000"})
    event_id = ma.fields.String()
    event_type = ma.fields.String()
    status = ma.fields.String(metadata={"enum": list(DELIVERY_STATUSES)})
    attempt_count = ma.fields.Integer()
    last_status_code = ma.fields.Integer(allow_none=True)
    last_error = ma.fields.String(allow_none=True)
    last_duration_ms = ma.fields.Integer(allow_none=True)
    next_attempt_at = ma.fields.DateTime(allow_none=True)
    created_at = ma.fields.DateTime()
    delivered_at = ma.fields.DateTime(allow_none=True)
    redelivery_of = ma.fields.String(allow_none=True)


class DeliveryDetailSchema(DeliverySchema):
    attempts = ma.fields.List(ma.fields.Nested(AttemptSchema))
