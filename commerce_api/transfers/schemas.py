"""Transfer request and response schemas."""

import marshmallow as ma

from ..http.lists import FieldsArgsSchema, ListArgsSchema, envelope_schema, fields_arg, list_schema
from ..http.schemas import StrictInteger, StrictSchema
from ..inventory.models import MAX_QUANTITY
from .models import MAX_LINES, TRANSFER_STATUSES
from .services import TRANSFER_FIELDS
from .shapes import TransferSchema

_SKU = {"example": "MUG-ENAMEL-WHT"}
_WAREHOUSE = {"example": "wh_01JD3Q9Z7G0000000000000000"}


def _quantity(description):
    return StrictInteger(
        required=True,
        validate=ma.validate.Range(min=1, max=MAX_QUANTITY),
        metadata={"description": description, "example": 40},
    )


class TransferLineInputSchema(StrictSchema):
    sku = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64), metadata=_SKU)
    quantity = _quantity("Units to move (at least 1).")


class ReceiptLineSchema(StrictSchema):
    sku = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64), metadata=_SKU)
    quantity = _quantity("Units received now (at most what is in transit).")


def _unique_skus(lines):
    seen = set()
    for line in lines:
        if line["sku"] in seen:
            raise ma.ValidationError(f"Each SKU may appear on one line only ({line['sku']}).")
        seen.add(line["sku"])


class TransferCreateSchema(StrictSchema):
    """``POST /api/inventory/transfers``."""

    from_warehouse_id = ma.fields.String(
        required=True, validate=ma.validate.Length(min=1, max=40), metadata=_WAREHOUSE
    )
    to_warehouse_id = ma.fields.String(
        required=True, validate=ma.validate.Length(min=1, max=40), metadata=_WAREHOUSE
    )
    lines = ma.fields.List(
        ma.fields.Nested(TransferLineInputSchema),
        required=True,
        validate=[ma.validate.Length(min=1, max=MAX_LINES), _unique_skus],
        metadata={"description": f"1 to {MAX_LINES} lines, one per SKU."},
    )
    reference = ma.fields.String(
        allow_none=True,
        validate=ma.validate.Length(max=200),
        metadata={"description": "Your own reference (a delivery note, a PO number)."},
    )


class TransferReceiveSchema(StrictSchema):
    """``POST /api/inventory/transfers/:id/receive``; no body receives everything."""

    lines = ma.fields.List(
        ma.fields.Nested(ReceiptLineSchema),
        validate=[ma.validate.Length(min=1, max=MAX_LINES), _unique_skus],
        metadata={
            "description": "What was received, per SKU (partly is fine); omitted: everything "
            "still in transit."
        },
    )


class TransferListArgsSchema(ListArgsSchema):
    fields = fields_arg(TRANSFER_FIELDS)
    status = ma.fields.String(validate=ma.validate.OneOf(TRANSFER_STATUSES))
    from_warehouse_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40))
    to_warehouse_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40))
    sku = ma.fields.String(
        validate=ma.validate.Length(min=1, max=64),
        metadata={"description": "Only transfers with a line of this SKU."},
    )


class TransferFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(TRANSFER_FIELDS)


TransferEnvelopeSchema = envelope_schema("TransferEnvelopeSchema", TransferSchema)
TransferListSchema = list_schema("TransferListSchema", TransferSchema)
