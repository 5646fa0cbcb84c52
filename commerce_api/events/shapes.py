"""What an event looks like in the feed and in a webhook delivery: documented and serialized
from here."""

import marshmallow as ma

from .models import EVENT_TYPES


class EventSchema(ma.Schema):
    """The body a webhook delivery carries, byte for byte the same fields."""

    id = ma.fields.String(metadata={"example": "evt_01JD3Q9Z7G0000000000000000"})
    type = ma.fields.String(validate=ma.validate.OneOf(EVENT_TYPES))
    created_at = ma.fields.DateTime(metadata={"example": "2026-11-22T10:04:05.123Z"})
    tenant_id = ma.fields.String()
    data = ma.fields.Dict(metadata={"description": "The resource as of the event."})
