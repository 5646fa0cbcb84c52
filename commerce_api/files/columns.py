"""The columns of each type of import: the request schema's fields, aliases of the
export's columns, and the export's read-only columns (ignored on import)."""

from dataclasses import dataclass, field

import marshmallow as ma

from ..errors import ApiError
from ..inventory.schemas import BulkStockItemSchema, SafetyStockSchema
from ..products.schemas import ListingUpdateSchema, ProductCreateSchema
from ..products.shapes import ListingSchema
from .exports import EXPORTS


@dataclass(frozen=True)
class FileType:
    """The columns of one type of import: writable fields, aliases and ignored ones."""

    name: str
    key: tuple[str, ...]  # the columns that name the row's target
    fields: dict[str, ma.fields.Field]  # column -> the request schema's field
    aliases: dict[str, str] = field(default_factory=dict)  # export column -> field
    ignored: frozenset[str] = frozenset()  # read-only columns of the export

    def check_header(self, header: list[str]) -> list[str]:
        """The header's field names; raises the file's 422 when it cannot be imported."""
        names = [column.strip() for column in header]
        seen, repeated, unknown = set(), [], []
        for name in names:
            if name in seen:
                repeated.append(name)
            seen.add(name)
            if name not in self.fields and name not in self.aliases and name not in self.ignored:
                unknown.append(name)
        if repeated:
            raise ApiError(
                "CSV_DUPLICATE_COLUMN",
                f"Columns given twice: {', '.join(repeated)}.",
                details={"columns": repeated},
            )
        if unknown:
            raise ApiError(
                "CSV_UNKNOWN_COLUMN",
                f"Unknown columns: {', '.join(unknown)}.",
                details={"columns": unknown, "known": sorted([*self.fields, *self.aliases])},
            )
        given = {self.aliases.get(name, name) for name in names}
        missing = [name for name in self.key if name not in given]
        if missing:
            raise ApiError(
                "CSV_MISSING_COLUMN",
                f"Required columns missing: {', '.join(missing)}.",
                details={"columns": missing},
            )
        return [self.aliases.get(name, name) for name in names]


def _schema_fields(*schemas: type[ma.Schema]) -> dict[str, ma.fields.Field]:
    fields = {}
    for schema in schemas:
        for name, schema_field in schema().fields.items():
            fields.setdefault(schema_field.data_key or name, schema_field)
    return fields


def _export_columns(name: str) -> frozenset[str]:
    return frozenset(EXPORTS[name].columns())


def _listing_columns() -> frozenset[str]:
    return frozenset(_schema_fields(ListingSchema))


def file_type(name: str) -> FileType:
    """The columns of an import of ``name`` (built from the schemas, so new fields count)."""
    if name == "products":
        fields = _schema_fields(ProductCreateSchema)
        return FileType(name, ("sku",), fields, ignored=_export_columns("products") - set(fields))
    if name == "inventory":
        fields = _schema_fields(BulkStockItemSchema, SafetyStockSchema)
        fields["warehouse_name"] = ma.fields.String()
        aliases = {
            "on_hand": "quantity",
            "warehouses.warehouse_id": "warehouse_id",
            "warehouses.name": "warehouse_name",
            "warehouses.on_hand": "quantity",
        }
        ignored = _export_columns("inventory") - set(fields) - set(aliases)
        return FileType(name, ("sku",), fields, aliases, ignored)
    fields = {
        "sku": ma.fields.String(),
        "marketplace": ma.fields.String(),
        **_schema_fields(ListingUpdateSchema),
    }
    return FileType(name, ("sku", "marketplace"), fields, ignored=_listing_columns() - set(fields))
