"""What a transfer looks like in answers and events: documented and serialized from here."""

import marshmallow as ma

from .models import TRANSFER_STATUSES

_AT = {"example": "2026-11-22T10:04:05.123Z"}


class TransferLineSchema(ma.Schema):
    sku = ma.fields.String()
    quantity = ma.fields.Integer(metadata={"description": "Units to move."})
    received_quantity = ma.fields.Integer(
        metadata={"description": "Units received into the destination so far."}
    )
    returned_quantity = ma.fields.Integer(
        metadata={"description": "Units returned to the source when cancelled in transit."}
    )
    in_transit_quantity = ma.fields.Integer(
        metadata={"description": "Units shipped and not yet received (0 unless `in_transit`)."}
    )


class TransferSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "trf_01JD3Q9Z7G0000000000000000"})
    status = ma.fields.String(
        validate=ma.validate.OneOf(TRANSFER_STATUSES),
        metadata={"description": "`draft -> in_transit -> received | cancelled`."},
    )
    from_warehouse_id = ma.fields.String(attribute="from_warehouse")
    to_warehouse_id = ma.fields.String(attribute="to_warehouse")
    reference = ma.fields.String(allow_none=True)
    lines = ma.fields.List(ma.fields.Nested(TransferLineSchema))
    created_by = ma.fields.String(allow_none=True)
    created_at = ma.fields.DateTime(metadata=_AT)
    updated_at = ma.fields.DateTime(metadata=_AT)
    shipped_at = ma.fields.DateTime(allow_none=True, metadata=_AT)
    received_at = ma.fields.DateTime(allow_none=True, metadata=_AT)
    cancelled_at = ma.fields.DateTime(allow_none=True, metadata=_AT)
