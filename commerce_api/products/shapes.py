"""What a product and a listing look like in answers: documented and serialized from here."""

import marshmallow as ma

from .models import FULFILLED_BY, HOLD_REASONS, LISTING_STATUSES, PRODUCT_STATUSES, SYNC_STATUSES


class ListingSchema(ma.Schema):
    marketplace = ma.fields.String()
    external_id = ma.fields.String(allow_none=True)
    price = ma.fields.Float(allow_none=True, metadata={"description": "The desired price."})
    currency = ma.fields.String(allow_none=True)
    quantity = ma.fields.Integer(
        metadata={"description": "The quantity the marketplace last accepted."}
    )
    fulfilled_by = ma.fields.String(
        validate=ma.validate.OneOf(FULFILLED_BY),
        metadata={
            "description": "Who ships this listing's orders. merchant: the tenant, from its "
            "own warehouses; the listing offers their available stock minus stock_buffer. "
            "marketplace: the marketplace, from its own warehouse (FBA/FBS: the SKU has stock "
            "in the marketplace's read-only warehouse); quantity is the marketplace's and "
            "pushes carry none."
        },
    )
    stock_buffer = ma.fields.Integer(
        metadata={"description": "Units held back: the listing offers available stock minus this."}
    )
    max_quantity = ma.fields.Integer(
        allow_none=True, metadata={"description": "At most this many are offered (null: no cap)."}
    )
    allocation_pct = ma.fields.Integer(
        metadata={"description": "The share (1-100 %) of the available stock offered."}
    )
    fixed_quantity = ma.fields.Integer(
        allow_none=True,
        metadata={"description": "Offered whatever the stock (null: follows the stock)."},
    )
    warehouse_ids = ma.fields.List(
        ma.fields.String(),
        allow_none=True,
        metadata={"description": "The own warehouses that feed the listing (null: all active)."},
    )
    status = ma.fields.String(validate=ma.validate.OneOf(LISTING_STATUSES))
    sync_status = ma.fields.String(
        validate=ma.validate.OneOf(SYNC_STATUSES),
        metadata={
            "description": "in_sync: the marketplace has the listing's state; pending: a "
            "change is on its way; submitted: the marketplace accepted the push for "
            "processing and its result is awaited (see submission); error: the marketplace "
            "refused the last push; held: not pushed, hold_reason says why."
        },
    )
    hold_reason = ma.fields.String(
        allow_none=True,
        validate=ma.validate.OneOf(HOLD_REASONS),
        metadata={
            "description": "Why a held listing is not pushed, null otherwise. price_missing: "
            "no price was set (a marketplace would pick one); PATCH the listing's price and "
            "it is pushed."
        },
    )
    last_synced_at = ma.fields.DateTime(allow_none=True)
    last_sync_error = ma.fields.String(allow_none=True)
    submission = ma.fields.Dict(
        allow_none=True,
        metadata={
            "description": "While submitted: the marketplace's submission (id: a feed or a "
            "listings submission) and what it carries."
        },
    )


class ListingRowSchema(ListingSchema):
    """A listing in ``GET /api/listings``: the listing with its product."""

    sku = ma.fields.String(metadata={"example": "MUG-ENAMEL-WHT"})
    product_id = ma.fields.String(
        attribute="product", metadata={"example": "prod_01JD3Q9Z7G0000000000000000"}
    )
    title = ma.fields.String(metadata={"description": "The product's title."})
    created_at = ma.fields.DateTime(metadata={"example": "2026-11-22T10:04:05.123Z"})
    updated_at = ma.fields.DateTime(metadata={"example": "2026-11-22T10:04:05.123Z"})


class ProductSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "prod_01JD3Q9Z7G0000000000000000"})
    sku = ma.fields.String()
    title = ma.fields.String()
    description = ma.fields.String(allow_none=True)
    status = ma.fields.String(validate=ma.validate.OneOf(PRODUCT_STATUSES))
    gtin = ma.fields.String(allow_none=True)
    category = ma.fields.String(allow_none=True)
    cost_price = ma.fields.Float(allow_none=True)
    weight_kg = ma.fields.Float(allow_none=True)
    images = ma.fields.List(ma.fields.String())
    created_at = ma.fields.DateTime(metadata={"example": "2026-11-22T10:04:05.123Z"})
    updated_at = ma.fields.DateTime()


class ComponentSchema(ma.Schema):
    sku = ma.fields.String()
    quantity = ma.fields.Integer(metadata={"description": "Units of the component per bundle."})


class ProductWithComponentsSchema(ProductSchema):
    components = ma.fields.List(
        ma.fields.Nested(ComponentSchema),
        metadata={"description": "A bundle's components (empty: not a bundle)."},
    )


class ProductDetailSchema(ProductWithComponentsSchema):
    listings = ma.fields.List(ma.fields.Nested(ListingSchema))
