"""Product request and response schemas."""

from decimal import Decimal

import marshmallow as ma

from ..http.lists import (
    FieldsArgsSchema,
    ListArgsSchema,
    envelope_schema,
    fields_arg,
    list_schema,
)
from ..http.schemas import (
    HTTP_URL_PATTERN,
    BulkErrorSchema,
    FullMatch,
    StrictDecimal,
    StrictInteger,
    StrictSchema,
)
from ..shapes import field_names
from .bundles import MAX_COMPONENTS
from .models import LISTING_STATUSES, PRODUCT_STATUSES, SYNC_STATUSES
from .services import LISTING_ROW_FIELDS, MAX_SEARCH_WORDS, PRODUCT_FIELDS, search_words
from .shapes import (
    ListingRowSchema,
    ListingSchema,
    ProductDetailSchema,
    ProductSchema,
    ProductWithComponentsSchema,
)

# A SKU is a path segment (/api/products/:sku, /api/inventory/:sku): it may not be one of
# the fixed segments beside it, nor a dot segment that clients fold away.
RESERVED_SKUS = ("bulk", "warehouses", "adjustments", "transfers", ".", "..")
SKU_PATTERN = r"^(?!(bulk|warehouses|adjustments|\.|\.\.)$)[A-Za-z0-9._-]{1,64}$"
SKU_RULE = "1-64 of A-Z a-z 0-9 . _ -, and not bulk, warehouses, adjustments, . or .."
MAX_WEIGHT_KG = Decimal("999999999.999")
MAX_LISTING_PRICE = Decimal("999999999999.99")  # what a money column (14, 2) holds
MAX_STOCK_BUFFER = 1_000_000_000  # inventory's MAX_QUANTITY
MAX_COMPONENT_QUANTITY = 10_000
IMAGE_URL_PATTERN = HTTP_URL_PATTERN  # checked as documented (http/schemas.py)
DETAIL_FIELDS = field_names(ProductDetailSchema)


class ProductWritableFields(StrictSchema):
    title = ma.fields.String(validate=ma.validate.Length(min=1, max=500))
    description = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=10_000))
    status = ma.fields.String(validate=ma.validate.OneOf(PRODUCT_STATUSES))
    gtin = ma.fields.String(
        allow_none=True,
        metadata={"description": "GTIN-8, UPC-12, EAN-13 or GTIN-14 with a valid check digit."},
    )
    category = ma.fields.String(allow_none=True, validate=ma.validate.Length(min=1, max=100))
    cost_price = StrictDecimal(
        places=2, allow_none=True, validate=ma.validate.Range(min=0), metadata={"example": 12.5}
    )
    weight_kg = StrictDecimal(
        places=3,
        allow_none=True,
        # the column holds 12 digits, 3 of them decimals
        validate=ma.validate.Range(min=0, max=MAX_WEIGHT_KG),
        metadata={"example": 0.25},
    )
    images = ma.fields.List(
        ma.fields.String(
            validate=[
                ma.validate.Length(max=2048),
                FullMatch(IMAGE_URL_PATTERN, error="Not an http(s) URL (RFC 3986)."),
            ],
            metadata={"example": "https://cdn.example.com/img/mug-white.jpg"},
        ),
        validate=ma.validate.Length(max=20),
    )


class ComponentInputSchema(StrictSchema):
    sku = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64))
    quantity = StrictInteger(
        required=True,
        validate=ma.validate.Range(min=1, max=MAX_COMPONENT_QUANTITY),
        metadata={"description": "Units of the component per bundle (a positive integer)."},
    )


def _components():
    return ma.fields.List(
        ma.fields.Nested(ComponentInputSchema),
        allow_none=True,
        validate=ma.validate.Length(max=MAX_COMPONENTS),
        metadata={
            "description": "Makes the product a bundle of these SKUs (one level: a component "
            "is not a bundle); `[]` or null: not a bundle. A bundle holds no stock of its own."
        },
    )


class ProductCreateSchema(ProductWritableFields):
    components = _components()
    sku = ma.fields.String(
        required=True,
        validate=FullMatch(SKU_PATTERN, error=SKU_RULE),
    )
    title = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=500))
    status = ma.fields.String(load_default="draft", validate=ma.validate.OneOf(PRODUCT_STATUSES))


class ProductUpdateSchema(ProductWritableFields):
    """Only the fields present change; ``sku`` cannot change."""

    components = _components()


class ListingUpdateSchema(StrictSchema):
    """Only the fields present change; the worker pushes the change to the marketplace."""

    price = StrictDecimal(
        places=2,
        validate=ma.validate.Range(min=Decimal("0.01"), max=MAX_LISTING_PRICE),
        metadata={"example": 24.99, "description": "The price the listing asks."},
    )
    stock_buffer = StrictInteger(
        validate=ma.validate.Range(min=0, max=MAX_STOCK_BUFFER),
        metadata={
            "example": 2,
            "description": "Units held back from this marketplace: it is offered "
            "min(max_quantity, floor(available in its warehouses x allocation_pct / 100) "
            "- stock_buffer), never below 0.",
        },
    )
    max_quantity = StrictInteger(
        allow_none=True,
        validate=ma.validate.Range(min=0, max=MAX_STOCK_BUFFER),
        metadata={"example": 20, "description": "A cap on what is offered; null: none."},
    )
    allocation_pct = StrictInteger(
        validate=ma.validate.Range(min=1, max=100),
        metadata={
            "example": 60,
            "description": "The share of the available stock offered, 1-100 (rounded down).",
        },
    )
    fixed_quantity = StrictInteger(
        allow_none=True,
        validate=ma.validate.Range(min=0, max=MAX_STOCK_BUFFER),
        metadata={
            "description": "Offer exactly this many, whatever the stock; null: follow the "
            "stock. Cannot be set together with max_quantity (`INVALID_ALLOCATION`)."
        },
    )
    warehouse_ids = ma.fields.List(
        ma.fields.String(validate=ma.validate.Length(min=1, max=40)),
        allow_none=True,
        validate=ma.validate.Length(min=1, max=100),
        metadata={
            "description": "The tenant's own warehouses whose stock feeds this listing; "
            "null: every active own warehouse."
        },
    )
    status = ma.fields.String(
        validate=ma.validate.OneOf(LISTING_STATUSES),
        metadata={"description": "inactive takes the listing off sale on the marketplace."},
    )


class BulkItemSchema(ProductWritableFields):
    sku = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64))


class BulkUpdateSchema(StrictSchema):
    updates = ma.fields.List(
        ma.fields.Raw(
            allow_none=True,  # like any item that is not an object: that item fails
            metadata={
                "description": "`{sku, <fields to change>}`",
                "item_schema": BulkItemSchema,  # the document's item type
            },
        ),
        required=True,
        validate=ma.validate.Length(min=1, max=100),
        metadata={"description": "1 to 100 items of `{sku, <fields to change>}`."},
    )


class SyncRequestSchema(StrictSchema):
    marketplaces = ma.fields.List(
        ma.fields.String(validate=ma.validate.Length(min=1, max=64)),
        validate=ma.validate.Length(min=1, max=20),
        metadata={"description": "Marketplaces to push to; all connected ones when omitted."},
    )


def validate_search(text):
    words = search_words(text)
    if not words:
        raise ma.ValidationError("Give at least one word.")
    if len(words) > MAX_SEARCH_WORDS:
        raise ma.ValidationError(f"At most {MAX_SEARCH_WORDS} distinct words.")


class ProductListArgsSchema(ListArgsSchema):
    fields = fields_arg(PRODUCT_FIELDS)
    status = ma.fields.String(validate=ma.validate.OneOf(PRODUCT_STATUSES))
    marketplace = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    category = ma.fields.String(
        validate=ma.validate.Length(min=1, max=100),
        metadata={"description": "Products of this category (exact, as pricing rules match)."},
    )
    search = ma.fields.String(
        validate=[ma.validate.Length(min=1, max=200), validate_search],
        metadata={
            "description": "Words matched against title, SKU and GTIN (all must match; "
            f"at most {MAX_SEARCH_WORDS} distinct words)."
        },
    )
    sort = ma.fields.String(
        load_default="created_at",
        validate=ma.validate.OneOf(["sku", "title", "created_at", "updated_at"]),
    )


class ListingListArgsSchema(ListArgsSchema):
    fields = fields_arg(LISTING_ROW_FIELDS)
    sync_status = ma.fields.String(
        validate=ma.validate.OneOf(SYNC_STATUSES),
        metadata={
            "description": "Only listings in this sync status (`pending`, `error`: the ones "
            "that need attention)."
        },
    )
    marketplace = ma.fields.String(validate=ma.validate.Length(min=1, max=64))


class ProductFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(DETAIL_FIELDS)


# Response documentation -------------------------------------------------------------


ProductDetailEnvelopeSchema = envelope_schema("ProductDetailEnvelopeSchema", ProductDetailSchema)
# create and update answer with the product alone (SPEC)
ProductEnvelopeSchema = envelope_schema("ProductEnvelopeSchema", ProductWithComponentsSchema)
ListingEnvelopeSchema = envelope_schema("ListingEnvelopeSchema", ListingSchema)


ProductListSchema = list_schema("ProductListSchema", ProductSchema)
ListingListSchema = list_schema("ListingListSchema", ListingRowSchema)


class BulkResultSchema(ma.Schema):
    updated = ma.fields.Integer()
    failed = ma.fields.Integer()
    errors = ma.fields.List(ma.fields.Nested(BulkErrorSchema))


BulkResultEnvelopeSchema = envelope_schema("BulkResultEnvelopeSchema", BulkResultSchema)


class SyncResultSchema(ma.Schema):
    job_id = ma.fields.String()
    status = ma.fields.String()
    marketplaces = ma.fields.List(ma.fields.String(), allow_none=True)


SyncResultEnvelopeSchema = envelope_schema("SyncResultEnvelopeSchema", SyncResultSchema)
