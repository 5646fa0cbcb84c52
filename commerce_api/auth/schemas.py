"""API key request and response schemas (``/api/api-keys``)."""

import marshmallow as ma

from ..http.lists import FieldsArgsSchema, ListArgsSchema, envelope_schema, fields_arg, list_schema
from ..http.schemas import StrictInteger, StrictSchema, Timestamp
from ..shapes import field_names
from .models import ALL_SCOPES, SCOPES
from .shapes import ApiKeySchema

KEY_FIELDS = field_names(ApiKeySchema)
SCOPE_VALUES = (*SCOPES, ALL_SCOPES)
MAX_ALLOWED_IPS = 100
MAX_RATE_LIMIT = 2**31 - 1  # the columns are 32-bit integers


_NAME = {"validate": ma.validate.Length(min=1, max=200), "metadata": {"example": "ERP sync"}}
_SCOPES_DOC = {
    "description": 'Scopes the key grants: a list of scopes, or `["all"]` (every scope, '
    "present and future; only a caller holding `all` may grant it). A caller can never "
    "grant a scope it does not hold itself (403 `SCOPE_ESCALATION`).",
    "example": ["orders:read", "inventory:write"],
}
_EXPIRES_DOC = {"description": "ISO 8601 timestamp in the future; null: never expires."}
_IPS_DOC = {
    "description": "CIDRs (IPv4 or IPv6) the key may be used from; null or empty: anywhere.",
    "example": ["203.0.113.0/24"],
}


def _scopes(**kwargs):
    return ma.fields.List(
        ma.fields.String(validate=ma.validate.OneOf(SCOPE_VALUES)),
        validate=ma.validate.Length(min=1, max=len(SCOPE_VALUES)),
        metadata=_SCOPES_DOC,
        **kwargs,
    )


def _allowed_ips():
    return ma.fields.List(
        ma.fields.String(validate=ma.validate.Length(min=1, max=64)),
        allow_none=True,
        validate=ma.validate.Length(max=MAX_ALLOWED_IPS),
        metadata=_IPS_DOC,
    )


def _rate_limit(window):
    return StrictInteger(
        allow_none=True,
        validate=ma.validate.Range(min=1, max=MAX_RATE_LIMIT),
        metadata={
            "description": f"Requests per {window} for this key instead of the plan's "
            "(Enterprise plan only: 422 `PLAN_REQUIRED` on other plans)."
        },
    )


class ApiKeyCreateSchema(StrictSchema):
    name = ma.fields.String(required=True, **_NAME)
    scopes = _scopes(required=True)
    expires_at = Timestamp(allow_none=True, metadata=_EXPIRES_DOC)
    allowed_ips = _allowed_ips()
    rate_limit_per_minute = _rate_limit("minute")
    rate_limit_per_hour = _rate_limit("hour")


class ApiKeyUpdateSchema(StrictSchema):
    """Only the fields present change; ``scopes`` may only narrow."""

    name = ma.fields.String(**_NAME)
    scopes = _scopes()
    expires_at = Timestamp(allow_none=True, metadata=_EXPIRES_DOC)
    allowed_ips = _allowed_ips()


class ApiKeyListArgsSchema(ListArgsSchema):
    fields = fields_arg(KEY_FIELDS)
    revoked = ma.fields.Boolean(
        truthy={"true"},
        falsy={"false"},
        metadata={"description": "`false`: live keys only; `true`: revoked keys only."},
    )


class ApiKeyFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(KEY_FIELDS)


class ApiKeyDeleteArgsSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    confirm = ma.fields.String(
        validate=ma.validate.OneOf(["self"]),
        metadata={
            "description": "`self` confirms revoking the key that makes this request "
            "(without it: 409 `CONFIRMATION_REQUIRED`)."
        },
    )


class ApiKeyWithSecretSchema(ApiKeySchema):
    key = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "The secret (`ck_...`), shown only in this answer: store it now."
            " An idempotent replay of the answer shows null (a secret is shown once).",
            "example": "ck_Xq8...",
        },
    )


ApiKeyEnvelopeSchema = envelope_schema("ApiKeyEnvelopeSchema", ApiKeySchema)
ApiKeyWithSecretEnvelopeSchema = envelope_schema(
    "ApiKeyWithSecretEnvelopeSchema", ApiKeyWithSecretSchema
)
ApiKeyListSchema = list_schema("ApiKeyListSchema", ApiKeySchema)
