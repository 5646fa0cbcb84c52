"""What a stock record, a warehouse and an adjustment look like in answers: documented and
serialized from here."""

import marshmallow as ma

from .models import INVENTORY_STATUSES, REASONS, WAREHOUSE_TYPES


class WarehouseEntrySchema(ma.Schema):
    warehouse_id = ma.fields.String()
    name = ma.fields.String()
    type = ma.fields.String(validate=ma.validate.OneOf(WAREHOUSE_TYPES))
    on_hand = ma.fields.Integer()
    reserved = ma.fields.Integer()
    available = ma.fields.Integer()
    incoming = ma.fields.Integer(
        metadata={"description": "In transit into this warehouse (shipped transfers)."}
    )


class InventoryRecordSchema(ma.Schema):
    sku = ma.fields.String()
    title = ma.fields.String()
    product_id = ma.fields.String(attribute="product")
    total_on_hand = ma.fields.Integer()
    total_reserved = ma.fields.Integer()
    total_available = ma.fields.Integer()
    total_incoming = ma.fields.Integer(
        metadata={"description": "In transit into the SKU's warehouses (shipped transfers)."}
    )
    safety_stock = ma.fields.Integer()
    status = ma.fields.String(validate=ma.validate.OneOf(INVENTORY_STATUSES))
    warehouses = ma.fields.List(ma.fields.Nested(WarehouseEntrySchema))
    updated_at = ma.fields.DateTime(metadata={"example": "2026-11-22T10:04:05.123Z"})


class WarehouseSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "wh_01JD3Q9Z7G0000000000000000"})
    name = ma.fields.String()
    address = ma.fields.String(allow_none=True)
    type = ma.fields.String(validate=ma.validate.OneOf(WAREHOUSE_TYPES))
    marketplace = ma.fields.String(allow_none=True)
    is_active = ma.fields.Boolean()
    is_readonly = ma.fields.Boolean()
    created_at = ma.fields.DateTime()
    updated_at = ma.fields.DateTime()


class AdjustmentSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "adj_01JD3Q9Z7G0000000000000000"})
    sku = ma.fields.String()
    warehouse_id = ma.fields.String(attribute="warehouse")
    quantity_type = ma.fields.String(validate=ma.validate.OneOf(["on_hand", "reserved"]))
    before_quantity = ma.fields.Integer()
    after_quantity = ma.fields.Integer()
    delta = ma.fields.Integer()
    reason = ma.fields.String(validate=ma.validate.OneOf(REASONS))
    note = ma.fields.String(allow_none=True)
    reference = ma.fields.String(allow_none=True)
    sequence = ma.fields.Integer(
        metadata={"description": "Place in its stock row's ledger (1, 2, 3, ...)."}
    )
    created_by = ma.fields.String(allow_none=True)
    created_at = ma.fields.DateTime()
