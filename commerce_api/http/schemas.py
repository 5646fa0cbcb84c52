"""Schemas shared by every resource: the strict schema base, strict fields and the error
envelope."""

import math
from decimal import Decimal, InvalidOperation

import marshmallow as ma

from ..timeutil import parse_timestamp

DECIMAL_LIMIT = Decimal(10) ** 10  # a StrictDecimal is below this in magnitude


class FullMatch(ma.validate.Regexp):
    """``Regexp`` matched against the whole value: Python's ``$`` also matches before a
    final newline, so ``re.match`` lets ``"amazon\\n"`` through. The pattern keeps its
    ``^...$`` for the OpenAPI document (where ``$`` is the end of the text)."""

    def __call__(self, value):
        if self.regex.fullmatch(value) is None:
            raise ma.ValidationError(self._format_error(value))
        return value


class StrictSchema(ma.Schema):
    """Unknown fields are errors."""

    class Meta:
        unknown = ma.RAISE


class StrictBoolean(ma.fields.Boolean):
    """A JSON ``true``/``false`` only (not 1, "yes" or "true")."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class StrictDecimal(ma.fields.Field):
    """A JSON number (not a string, not a boolean), finite, kept as Decimal with ``places``;
    a negative zero is loaded as zero."""

    default_error_messages = {
        "invalid": "Not a valid number.",
        "too_precise": "At most {places} decimal places.",
    }

    def __init__(self, places=2, **kwargs):
        self.places = places
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            raise self.make_error("invalid")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.make_error("invalid")
        try:
            number = Decimal(str(value))
        except InvalidOperation:
            raise self.make_error("invalid") from None
        if number.as_tuple().exponent < -self.places and number != number.quantize(
            Decimal(1).scaleb(-self.places)
        ):
            raise self.make_error("too_precise", places=self.places)
        if abs(number) >= DECIMAL_LIMIT:
            raise self.make_error("invalid")
        if number.is_zero():
            number = abs(number)  # -0.0 is zero: stored and shown as 0 (never "-0.0")
        return number

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else float(value)


class StrictInteger(ma.fields.Integer):
    """A JSON integer. A number without a fractional part (``5.0``) is that integer, as JSON
    Schema says (the OpenAPI 3.1 document's ``type: integer``); ``5.5``, strings and
    booleans are refused."""

    def __init__(self, **kwargs):
        kwargs.setdefault("strict", True)
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return super()._deserialize(value, attr, data, **kwargs)


class Timestamp(ma.fields.String):
    """An ISO 8601 timestamp (a date alone means its midnight UTC), loaded as epoch ms."""

    default_error_messages = {"invalid_timestamp": "Not an ISO 8601 timestamp."}

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            return parse_timestamp(text)
        except (ValueError, OverflowError):
            raise self.make_error("invalid_timestamp") from None


class ErrorBodySchema(ma.Schema):
    code = ma.fields.String(required=True, metadata={"example": "VALIDATION_ERROR"})
    message = ma.fields.String(required=True)
    details = ma.fields.Dict(required=True)


class ErrorSchema(ma.Schema):
    """Every error: ``{error: {code, message, details}}``."""

    error = ma.fields.Nested(ErrorBodySchema, required=True)


class BulkErrorSchema(ma.Schema):
    """One refused item of a bulk request; ``sku`` / ``order_id`` are null when the item
    did not give one as a string."""

    index = ma.fields.Integer()
    sku = ma.fields.String(allow_none=True)
    order_id = ma.fields.String(allow_none=True)
    code = ma.fields.String()
    message = ma.fields.String()
    details = ma.fields.Dict()
