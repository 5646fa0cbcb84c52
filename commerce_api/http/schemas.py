"""Schemas shared by every resource: the strict schema base, strict fields and the error
envelope."""

import math
import re
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


# Request rules whose document pattern is the rule itself: the server checks the value with
# the pattern the document shows (``FullMatch``), so the two cannot disagree. Character
# classes are spelled out ([0-9], not \d: Python's \d also takes other scripts' digits).

# The characters ``str.strip()`` removes (``str.isspace``), for a pattern.
BLANKS = "".join(f"\\u{ord(c):04x}" for c in map(chr, range(0x110000)) if c.isspace())
NOT_BLANK_PATTERN = f"^[^\\x00]*[^\\x00{BLANKS}][^\\x00]*$"

# An http(s) URL as RFC 3986 spells it: a host name with a top-level domain, an optional
# port, then a path, query and fragment of URI characters and %-escapes (any case, upper-case
# hosts too). No user:password@ part (credentials have no place in a URL the service stores
# and shows), no IP address. Kept to plain classes: generators (schemathesis) build values
# from it, and nested alternatives made that too slow for a bulk body.
_URI_CHARS = r"A-Za-z0-9._~!$&'()*+,;=:@/-"
_PORT = (
    r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}|0)"
)
HTTP_URL_PATTERN = (
    r"^[Hh][Tt][Tt][Pp][Ss]?://(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}"
    rf"(?::{_PORT})?(?:/(?:[{_URI_CHARS}]|%[0-9A-Fa-f]{{2}})*)?"
    rf"(?:\?(?:[{_URI_CHARS}?]|%[0-9A-Fa-f]{{2}})*)?(?:#(?:[{_URI_CHARS}?]|%[0-9A-Fa-f]{{2}})*)?$"
)


class NotBlank(FullMatch):
    """Refuses a value that is empty once trimmed (``str.strip``) or holds NUL, with the
    pattern the document shows, made from the same characters."""

    def __init__(self, error: str = "Must not be blank.") -> None:
        super().__init__(NOT_BLANK_PATTERN, error=error)


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


class IsoTimestamp(ma.fields.String):
    """Any ISO 8601 timestamp (a date alone means its midnight UTC), loaded as epoch ms: for
    what marketplaces and files deliver (``docs/connector-http.md``), never a request body
    of the API, whose timestamps are ``Timestamp``."""

    default_error_messages = {"invalid_timestamp": "Not an ISO 8601 timestamp."}

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            return parse_timestamp(text)
        except (ValueError, OverflowError):
            raise self.make_error("invalid_timestamp") from None


# RFC 3339's date-time, what the document's ``format: date-time`` says (one definition)
RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})",
    re.ASCII,
)


class Timestamp(ma.fields.String):
    """An RFC 3339 date-time (``2026-11-22T10:04:05Z``, offset required), loaded as epoch
    ms; documented as ``format: date-time``, and the server takes exactly that: a date alone
    or a time without its offset is refused, as the document says."""

    default_error_messages = {
        "invalid_timestamp": "Not an RFC 3339 date-time (e.g. 2026-11-22T10:04:05Z)."
    }

    def __init__(self, **kwargs):
        kwargs["metadata"] = {"format": "date-time", **kwargs.get("metadata", {})}
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        match = RFC3339.fullmatch(text)
        if match is None:
            raise self.make_error("invalid_timestamp")
        day, minutes, seconds, fraction, offset = match.groups()
        fraction = (fraction or "")[:3].ljust(3, "0")
        try:
            return parse_timestamp(f"{day}T{minutes}:{seconds}.{fraction}{offset}")
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
