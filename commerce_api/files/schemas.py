"""Request and response schemas of imports and exports."""

from ..http.lists import envelope_schema
from ..inventory.schemas import InventoryListArgsSchema, TenantAdjustmentListArgsSchema
from ..orders.schemas import OrderListArgsSchema
from ..products.schemas import ProductListArgsSchema
from .imports import IMPORT_TYPES, MAX_IMPORT_BYTES
from .shapes import ImportResultSchema, ImportSchema

# what a list takes and an export does not: pages and the shape of one
NOT_EXPORTED = ("limit", "cursor", "fields")


def _export_args(name, list_args):
    meta = type("Meta", (list_args.Meta,), {"exclude": NOT_EXPORTED})
    return type(name, (list_args,), {"Meta": meta, "__doc__": "The list's filters and sort."})


ProductExportArgsSchema = _export_args("ProductExportArgsSchema", ProductListArgsSchema)
InventoryExportArgsSchema = _export_args("InventoryExportArgsSchema", InventoryListArgsSchema)
AdjustmentExportArgsSchema = _export_args(
    "AdjustmentExportArgsSchema", TenantAdjustmentListArgsSchema
)
OrderExportArgsSchema = _export_args("OrderExportArgsSchema", OrderListArgsSchema)

IMPORT_REQUEST_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["type", "file"],
                "properties": {
                    "type": {"type": "string", "enum": list(IMPORT_TYPES)},
                    "dry_run": {
                        "type": "boolean",
                        "default": False,
                        "description": "Check every row and apply nothing.",
                    },
                    "file": {
                        "type": "string",
                        "contentMediaType": "text/csv",
                        "description": (
                            "A CSV file (UTF-8, with or without a byte-order mark; `,` `;` or "
                            f"tab separated), at most {MAX_IMPORT_BYTES // (1024 * 1024)} MB; "
                            "its header names the columns (the API's field names)."
                        ),
                    },
                },
            }
        }
    },
}

ImportEnvelopeSchema = envelope_schema("ImportEnvelopeSchema", ImportSchema)

__all__ = [
    "AdjustmentExportArgsSchema",
    "ImportEnvelopeSchema",
    "ImportResultSchema",
    "InventoryExportArgsSchema",
    "OrderExportArgsSchema",
    "ProductExportArgsSchema",
]
