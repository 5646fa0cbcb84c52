"""What a marketplace connection and a sync attempt look like in answers: documented and
serialized from here."""

import marshmallow as ma

from .models import ATTEMPT_STATUSES, CONNECTION_STATUSES, CONNECTORS

# what the sync history shows (list_attempts reads no other resource type; a receipt from
# the marketplace is inbound, every call to it outbound)
ATTEMPT_RESOURCE_TYPES = ("order", "product")
DIRECTIONS = ("outbound", "inbound")


class ConnectionSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "mkc_01JD3Q9Z7G0000000000000000"})
    marketplace = ma.fields.String()
    connector = ma.fields.String(validate=ma.validate.OneOf(CONNECTORS))
    base_url = ma.fields.String(allow_none=True)
    status = ma.fields.String(validate=ma.validate.OneOf(CONNECTION_STATUSES))
    settings = ma.fields.Dict()
    # whether a token is stored; the token itself is never shown
    has_api_token = ma.fields.Boolean(attribute="api_token")
    # whether the connector's secrets (amazon) are stored; they are never shown
    has_credentials = ma.fields.Boolean(attribute="credentials")
    status_reason = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "Why the service cannot use this connection now although it is"
            " active, or null when it works: `AUTH: ...` (the marketplace refused its"
            " credentials), `SECRET_KEY_MISMATCH: ...` (its stored secrets cannot be decrypted"
            " with the service's keys; the operator must put the key back)."
        },
    )
    last_pull_at = ma.fields.DateTime(allow_none=True)
    last_pull_status = ma.fields.String(allow_none=True)
    last_pull_error = ma.fields.String(allow_none=True)
    created_at = ma.fields.DateTime()
    updated_at = ma.fields.DateTime()


class SyncAttemptSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "syn_01JD3Q9Z7G0000000000000000"})
    marketplace = ma.fields.String()
    resource_type = ma.fields.String(validate=ma.validate.OneOf(ATTEMPT_RESOURCE_TYPES))
    resource_id = ma.fields.String()
    sku = ma.fields.String(allow_none=True)
    operation = ma.fields.String()
    direction = ma.fields.String(validate=ma.validate.OneOf(DIRECTIONS))
    status = ma.fields.String(validate=ma.validate.OneOf(ATTEMPT_STATUSES))
    error = ma.fields.Dict(allow_none=True)
    details = ma.fields.Dict()
    duration_ms = ma.fields.Integer(allow_none=True)
    created_by = ma.fields.String(allow_none=True)
    created_at = ma.fields.DateTime()


class ConnectionCheckSchema(ma.Schema):
    ok = ma.fields.Boolean(metadata={"description": "The authenticated call succeeded."})
    detail = ma.fields.String(metadata={"description": "What was checked, or what failed."})
    code = ma.fields.String(allow_none=True, metadata={"description": "The failure's code."})
