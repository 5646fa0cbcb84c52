"""Marketplace connection and sync-history schemas, and the shapes of connector answers."""

import marshmallow as ma

from ..http.lists import ListArgsSchema, envelope_schema, fields_arg, list_schema
from ..http.schemas import FullMatch, StrictDecimal, StrictInteger, StrictSchema
from ..inventory.models import MAX_QUANTITY
from .models import ATTEMPT_STATUSES, CONNECTION_STATUSES, CONNECTORS
from .services import ATTEMPT_FIELDS, CONNECTION_FIELDS, MARKETPLACE_PATTERN
from .shapes import (
    ATTEMPT_RESOURCE_TYPES,
    ConnectionCheckSchema,
    ConnectionSchema,
    SyncAttemptSchema,
)


class ConnectionCreateSchema(StrictSchema):
    marketplace = ma.fields.String(
        required=True,
        validate=FullMatch(MARKETPLACE_PATTERN, error="1-64 of A-Z a-z 0-9 . _ -"),
        metadata={"example": "amazon_us"},
    )
    connector = ma.fields.String(required=True, validate=ma.validate.OneOf(CONNECTORS))
    base_url = ma.fields.String(
        validate=ma.validate.Length(min=1, max=2048),
        metadata={"description": "http connector: the marketplace adapter's base URL (public)."},
    )
    api_token = ma.fields.String(
        load_only=True,
        validate=ma.validate.Length(min=1, max=2000),
        metadata={"description": "http connector: sent as a Bearer token; never shown again."},
    )
    settings = ma.fields.Dict(
        metadata={
            "description": "sandbox connector: initial_orders, orders_per_pull, max_orders"
            " (integers); fba_skus (the SKUs its FBA warehouse holds; unset: every one); "
            "amazon: region (na, eu, fe), marketplace_id, seller_id, optional endpoint and "
            "token_endpoint; http: optional batch_size (docs/connector-http.md)."
        }
    )
    credentials = ma.fields.Dict(
        load_only=True,
        metadata={
            "description": "amazon connector: lwa_client_id, lwa_client_secret, "
            "refresh_token; stored encrypted, never shown again."
        },
    )


class ConnectionUpdateSchema(StrictSchema):
    """Only the fields present change."""

    base_url = ma.fields.String(
        validate=ma.validate.Length(min=1, max=2048),
        metadata={"description": "http connector: the adapter's new base URL (public)."},
    )
    api_token = ma.fields.String(
        load_only=True,
        allow_none=True,
        validate=ma.validate.Length(min=1, max=2000),
        metadata={"description": "http connector: the new Bearer token (null: none)."},
    )
    settings = ma.fields.Dict(
        metadata={"description": "sandbox, amazon: the settings to change; http: batch_size."}
    )
    credentials = ma.fields.Dict(
        load_only=True,
        metadata={"description": "amazon connector: the new credentials (all three)."},
    )
    status = ma.fields.String(
        validate=ma.validate.OneOf(CONNECTION_STATUSES),
        metadata={"description": "disabled: neither pulled nor pushed until active again."},
    )


class ConnectionListArgsSchema(ListArgsSchema):
    fields = fields_arg(CONNECTION_FIELDS)
    connector = ma.fields.String(validate=ma.validate.OneOf(CONNECTORS))
    status = ma.fields.String(validate=ma.validate.OneOf(CONNECTION_STATUSES))


class SyncHistoryArgsSchema(ListArgsSchema):
    fields = fields_arg(ATTEMPT_FIELDS)
    resource_type = ma.fields.String(validate=ma.validate.OneOf(ATTEMPT_RESOURCE_TYPES))
    order_id = ma.fields.String(validate=ma.validate.Length(min=1, max=80))
    sku = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    marketplace = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    status = ma.fields.String(validate=ma.validate.OneOf(ATTEMPT_STATUSES))
    operation = ma.fields.String(validate=ma.validate.Length(min=1, max=32))


ConnectionEnvelopeSchema = envelope_schema("ConnectionEnvelopeSchema", ConnectionSchema)
ConnectionCheckEnvelopeSchema = envelope_schema(
    "ConnectionCheckEnvelopeSchema", ConnectionCheckSchema
)


ConnectionListSchema = list_schema("ConnectionListSchema", ConnectionSchema)


SyncHistoryListSchema = list_schema("SyncHistoryListSchema", SyncAttemptSchema)


# What connectors answer (checked by answers.py before anything stores it) -----------


def unstorable(text):
    """True when ``text`` holds NUL or a lone UTF-16 surrogate, which no database stores."""
    return "\x00" in text or (
        not text.isascii() and any("\ud800" <= char <= "\udfff" for char in text)
    )


def _storable(value):
    if unstorable(value):
        raise ma.ValidationError("Must not contain NUL or lone surrogates.")


def _text(max_length, min_length=1, **kwargs):
    return ma.fields.String(
        validate=[ma.validate.Length(min=min_length, max=max_length), _storable], **kwargs
    )


class ListingAnswerSchema(ma.Schema):
    """``push_product`` / ``push_price``: the listing as the marketplace now shows it."""

    class Meta:
        unknown = ma.EXCLUDE  # extra fields of the marketplace are not ours to keep

    external_id = _text(200, required=True)
    status = _text(32, load_default="active")
    price = StrictDecimal(places=2, allow_none=True, validate=ma.validate.Range(min=0))
    currency = ma.fields.String(
        allow_none=True,
        validate=FullMatch(r"^[A-Z]{3}$", error="A 3-letter code."),
    )
    # the marketplace-side ids besides external_id and what it last took (Shopify)
    refs = ma.fields.Dict(keys=ma.fields.String(), load_default=None, allow_none=True)
    # None: the push carried no quantity (a listing fulfilled by the marketplace)
    quantity = StrictInteger(
        load_default=0, allow_none=True, validate=ma.validate.Range(min=0, max=MAX_QUANTITY)
    )


class InventoryItemSchema(ma.Schema):
    """``fetch_inventory``: one SKU's stock in a marketplace-operated warehouse."""

    class Meta:
        unknown = ma.EXCLUDE

    sku = _text(64, required=True)
    on_hand = StrictInteger(required=True, validate=ma.validate.Range(min=0, max=MAX_QUANTITY))
    warehouse_type = ma.fields.String(
        load_default="FBA", allow_none=True, validate=ma.validate.OneOf(("FBA", "FBS"))
    )
