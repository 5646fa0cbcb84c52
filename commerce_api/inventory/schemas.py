"""Inventory request and response schemas."""

import marshmallow as ma

from ..http.lists import (
    FieldsArgsSchema,
    ListArgsSchema,
    envelope_schema,
    fields_arg,
    list_schema,
)
from ..http.schemas import BulkErrorSchema, NotBlank, StrictBoolean, StrictInteger, StrictSchema
from .models import CALLER_REASONS, INVENTORY_STATUSES, MAX_QUANTITY, REASONS, WAREHOUSE_TYPES
from .services import ADJUSTMENT_FIELDS, RECORD_FIELDS, WAREHOUSE_FIELDS
from .shapes import AdjustmentSchema, InventoryRecordSchema, WarehouseSchema

MAX_BULK_ITEMS = 500


def _quantity(**kwargs):
    return StrictInteger(
        validate=ma.validate.Range(max=MAX_QUANTITY),
        metadata={
            "description": "Absolute on-hand level to set. A negative value, or one below "
            "what is reserved, gives `NEGATIVE_QUANTITY`.",
            "example": 120,
            "minimum": 0,
        },
        **kwargs,
    )


class _StockChangeSchema(StrictSchema):
    """What every stock change names: the warehouse, the reason, a note."""

    warehouse_id = ma.fields.String(
        required=True,
        validate=ma.validate.Length(min=1, max=40),
        metadata={"example": "wh_01JD3Q9Z7G0000000000000000"},
    )
    reason = ma.fields.String(
        required=True,
        validate=ma.validate.OneOf(CALLER_REASONS),
        metadata={"description": "One of: " + ", ".join(CALLER_REASONS) + "."},
    )
    note = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=1000))


class StockSetSchema(_StockChangeSchema):
    """``PUT /api/inventory/:sku``."""

    quantity = _quantity(required=True)


def _delta(**kwargs):
    return StrictInteger(
        validate=[
            ma.validate.Range(min=-MAX_QUANTITY, max=MAX_QUANTITY),
            ma.validate.NoneOf([0], error="A delta of 0 changes nothing."),
        ],
        metadata={
            "description": "Units to add (positive) or take away (negative), applied to the "
            "current on-hand level atomically. A result below what is reserved (or below "
            "0) gives `NEGATIVE_QUANTITY`.",
            "example": 5,
        },
        **kwargs,
    )


class StockAdjustSchema(_StockChangeSchema):
    """``POST /api/inventory/:sku/adjustments``."""

    delta = _delta(required=True)


class BulkStockItemSchema(_StockChangeSchema):
    """One item of ``POST /api/inventory/bulk``: ``quantity`` (absolute) or ``delta``."""

    sku = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64))
    quantity = _quantity()
    delta = _delta()

    @ma.validates_schema
    def _quantity_or_delta(self, data, **kwargs):
        if ("quantity" in data) == ("delta" in data):
            raise ma.ValidationError("Give exactly one of quantity and delta.", "_schema")


class BulkStockSchema(StrictSchema):
    updates = ma.fields.List(
        ma.fields.Raw(
            allow_none=True,  # like any item that is not an object: that item fails
            metadata={
                "description": "`{sku, warehouse_id, quantity | delta, reason, note}`",
                "item_schema": BulkStockItemSchema,  # the document's item type
            },
        ),
        required=True,
        validate=ma.validate.Length(min=1, max=MAX_BULK_ITEMS),
        metadata={
            "description": "1 to 500 items of `{sku, warehouse_id, quantity | delta, reason, "
            "note}` (`quantity` sets the level, `delta` changes it); each is applied on its own."
        },
    )


class SafetyStockSchema(StrictSchema):
    """``PATCH /api/inventory/:sku``."""

    safety_stock = StrictInteger(
        required=True,
        validate=ma.validate.Range(min=0, max=MAX_QUANTITY),
        metadata={"description": "Available stock at or below which the SKU is `low`."},
    )


class WarehouseCreateSchema(StrictSchema):
    name = ma.fields.String(
        required=True, validate=[ma.validate.Length(min=1, max=200), NotBlank()]
    )
    address = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=500))
    type = ma.fields.String(
        load_default="own",
        validate=ma.validate.OneOf(
            ["own"],
            error="Only own warehouses are created here; FBA and FBS warehouses belong to "
            "their marketplace connection.",
        ),
    )
    is_active = StrictBoolean(load_default=True)


class WarehouseUpdateSchema(StrictSchema):
    name = ma.fields.String(validate=[ma.validate.Length(min=1, max=200), NotBlank()])
    address = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=500))
    is_active = StrictBoolean(
        metadata={"description": "A warehouse that holds stock cannot be deactivated."}
    )


class InventoryListArgsSchema(ListArgsSchema):
    fields = fields_arg(RECORD_FIELDS)
    status = ma.fields.String(validate=ma.validate.OneOf(INVENTORY_STATUSES))
    warehouse_id = ma.fields.String(
        validate=ma.validate.Length(min=1, max=40),
        metadata={"description": "Only SKUs with a stock row in this warehouse."},
    )
    sku = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    sort = ma.fields.String(
        load_default="sku",
        validate=ma.validate.OneOf(["sku", "updated_at", "total_available"]),
    )
    order = ma.fields.String(
        load_default="asc",
        validate=ma.validate.OneOf(["asc", "desc"]),
        metadata={"description": "Sort direction (default asc)."},
    )


class WarehouseListArgsSchema(ListArgsSchema):
    fields = fields_arg(WAREHOUSE_FIELDS)
    type = ma.fields.String(validate=ma.validate.OneOf(WAREHOUSE_TYPES))
    is_active = ma.fields.Boolean()
    order = ma.fields.String(
        load_default="asc",
        validate=ma.validate.OneOf(["asc", "desc"]),
        metadata={"description": "Creation order (default asc)."},
    )


class AdjustmentListArgsSchema(ListArgsSchema):
    fields = fields_arg(ADJUSTMENT_FIELDS)
    start_date = ma.fields.Date(metadata={"description": "Created on or after (UTC date)."})
    end_date = ma.fields.Date(metadata={"description": "Created on or before (UTC date)."})
    warehouse_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40))
    reason = ma.fields.String(validate=ma.validate.OneOf(REASONS))
    quantity_type = ma.fields.String(
        load_default="on_hand",
        validate=ma.validate.OneOf(["on_hand", "reserved", "all"]),
        metadata={
            "description": "Which quantity's changes to list: `on_hand` (default), "
            "`reserved` (reservations, releases, shipments) or `all`."
        },
    )

    @ma.validates_schema
    def _dates_in_order(self, data, **kwargs):
        start, end = data.get("start_date"), data.get("end_date")
        if start and end and start > end:
            raise ma.ValidationError("Must not be before start_date.", "end_date")


class TenantAdjustmentListArgsSchema(AdjustmentListArgsSchema):
    """The tenant's whole ledger: the per-SKU filters, plus ``sku``."""

    sku = ma.fields.String(
        validate=ma.validate.Length(min=1, max=64),
        metadata={"description": "Only this SKU's adjustments (an unknown SKU lists none)."},
    )


class RecordFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(RECORD_FIELDS)


# Response documentation -------------------------------------------------------------


InventoryRecordEnvelopeSchema = envelope_schema(
    "InventoryRecordEnvelopeSchema", InventoryRecordSchema
)


InventoryListSchema = list_schema("InventoryListSchema", InventoryRecordSchema)


WarehouseEnvelopeSchema = envelope_schema("WarehouseEnvelopeSchema", WarehouseSchema)


WarehouseListSchema = list_schema("WarehouseListSchema", WarehouseSchema)


AdjustmentListSchema = list_schema("AdjustmentListSchema", AdjustmentSchema)


AdjustmentEnvelopeSchema = envelope_schema("AdjustmentEnvelopeSchema", AdjustmentSchema)


class BulkStockResultSchema(ma.Schema):
    updated = ma.fields.Integer()
    failed = ma.fields.Integer()
    errors = ma.fields.List(ma.fields.Nested(BulkErrorSchema))


BulkStockResultEnvelopeSchema = envelope_schema(
    "BulkStockResultEnvelopeSchema", BulkStockResultSchema
)
