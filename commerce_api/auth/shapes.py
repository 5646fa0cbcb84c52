"""What an API key looks like in answers: documented and serialized from here."""

import marshmallow as ma

from .models import SCOPES


class ApiKeySchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "key_01JD3Q9Z7G0000000000000000"})
    name = ma.fields.String()
    tenant_id = ma.fields.String(attribute="tenant")
    prefix = ma.fields.String(
        attribute="key_prefix",
        metadata={"description": "The first characters of the key, to recognise it."},
    )
    scopes = ma.fields.List(
        ma.fields.String(validate=ma.validate.OneOf(SCOPES)),
        metadata={"description": "What the key grants (`all` is shown as every scope)."},
    )
    allowed_ips = ma.fields.List(ma.fields.String())
    expires_at = ma.fields.DateTime(allow_none=True)
    revoked_at = ma.fields.DateTime(allow_none=True)
    rate_limit_per_minute = ma.fields.Integer(allow_none=True)
    rate_limit_per_hour = ma.fields.Integer(allow_none=True)
    created_at = ma.fields.DateTime()
    last_used_at = ma.fields.DateTime(
        allow_none=True,
        metadata={"description": "When the key last authenticated a request (to the minute)."},
    )
