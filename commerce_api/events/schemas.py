"""Events feed request and response schemas (``/api/events``)."""

import marshmallow as ma

from ..http.lists import FieldsArgsSchema, ListArgsSchema, envelope_schema, fields_arg, list_schema
from ..http.schemas import Timestamp
from .feed import EVENT_FIELDS, TYPE_FILTERS
from .shapes import EventSchema


class EventListArgsSchema(ListArgsSchema):
    fields = fields_arg(EVENT_FIELDS)
    type = ma.fields.String(
        validate=ma.validate.OneOf(TYPE_FILTERS),
        metadata={
            "description": "One event type, or `<domain>.*` (`order.*`) for all of a domain's; "
            "asking for a domain the caller may not read is 403 `INSUFFICIENT_SCOPE`."
        },
    )
    created_after = Timestamp(
        metadata={"description": "Created at or after this date-time (RFC 3339)."}
    )
    created_before = Timestamp(
        metadata={"description": "Created at or before this date-time (RFC 3339)."}
    )

    @ma.validates_schema
    def _range_in_order(self, data, **kwargs):
        after, before = data.get("created_after"), data.get("created_before")
        if after is not None and before is not None and after > before:
            raise ma.ValidationError("Must not be before created_after.", "created_before")


class EventFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(EVENT_FIELDS)


EventEnvelopeSchema = envelope_schema("EventEnvelopeSchema", EventSchema)
EventListSchema = list_schema("EventListSchema", EventSchema)
