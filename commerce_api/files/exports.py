"""``GET /api/exports/{products|inventory|adjustments|orders}.csv``: a list of the API as a
CSV file, streamed a page at a time (constant memory whatever the tenant holds).

Each export walks the same service and filters as its list endpoint, in pages of
``PAGE_SIZE`` through the list's keyset cursor. Columns are the fields of the list's
response schema, in its order: a nested object's fields as ``object.field``, and the one
list that makes rows (an inventory record's ``warehouses``, an order's ``line_items``)
exploded into a row per element with its fields as ``list.field``, the parent's fields
repeated. Any other list is one cell (``csvio.cell_text``).
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import marshmallow as ma

from ..inventory.adjustments import list_tenant_adjustments
from ..inventory.services import list_records
from ..inventory.shapes import AdjustmentSchema, InventoryRecordSchema
from ..orders.reading import list_orders
from ..orders.shapes import OrderSchema
from ..products.services import list_products
from ..products.shapes import ProductSchema
from .csvio import cell_text, csv_line

PAGE_SIZE = 500
Page = Callable[[str, dict[str, Any]], tuple[list[dict[str, Any]], dict[str, Any]]]


def _nested_schema(field):
    schema = field.schema
    return schema if isinstance(schema, ma.Schema) else schema()


def _columns(schema: ma.Schema, explode: str | None, prefix: str = "") -> list[tuple[str, ...]]:
    """The paths of the schema's fields: ``("shipping_address", "city")``."""
    paths = []
    for name, field in schema.fields.items():
        key = field.data_key or name
        if isinstance(field, ma.fields.Nested) and not field.many:
            paths += [(key, *sub) for sub in _columns(_nested_schema(field), None)]
        elif key == explode and isinstance(field, ma.fields.List):
            inner = field.inner
            paths += [(key, *sub) for sub in _columns(_nested_schema(inner), None)]
        else:
            paths.append((key,))
    return paths


@dataclass(frozen=True)
class Export:
    """One CSV export: the list's page function, its response schema, the exploded list."""

    name: str
    scope: str
    page: Page
    schema: type[ma.Schema]
    explode: str | None = None

    def paths(self) -> list[tuple[str, ...]]:
        return _columns(self.schema(), self.explode)

    def columns(self) -> list[str]:
        return [".".join(path) for path in self.paths()]


EXPORTS = {
    "products": Export("products", "products:read", list_products, ProductSchema),
    "inventory": Export(
        "inventory", "inventory:read", list_records, InventoryRecordSchema, "warehouses"
    ),
    "adjustments": Export(
        "adjustments", "inventory:read", list_tenant_adjustments, AdjustmentSchema
    ),
    "orders": Export("orders", "orders:read", list_orders, OrderSchema, "line_items"),
}


def _value(item, path):
    for key in path:
        if not isinstance(item, dict):
            return None
        item = item.get(key)
    return item


def _rows(item: dict[str, Any], paths: list[tuple[str, ...]], explode: str | None):
    """The CSV rows of one item of the list (several when it has elements to explode)."""
    elements = item.get(explode) if explode else None
    if not elements:
        yield [cell_text(None if path[0] == explode else _value(item, path)) for path in paths]
        return
    for element in elements:
        yield [
            cell_text(_value(element, path[1:]) if path[0] == explode else _value(item, path))
            for path in paths
        ]


def iter_items(
    export: Export, tenant_id: str, args: dict[str, Any], page_size: int = PAGE_SIZE
) -> Iterator[dict[str, Any]]:
    """Every item the list would show with these filters, a page at a time."""
    args = {key: value for key, value in args.items() if key not in ("cursor", "fields")}
    cursor = None
    while True:
        items, meta = export.page(tenant_id, {**args, "limit": page_size, "cursor": cursor})
        yield from items
        cursor = meta.get("nextCursor")
        if not cursor:
            return


def stream_csv(
    export: Export,
    tenant_id: str,
    args: dict[str, Any],
    page_size: int = PAGE_SIZE,
    on_rows: Callable[[int], None] | None = None,
) -> Iterator[str]:
    """The export's CSV text: the header, then the rows, in chunks of about a page;
    ``on_rows(n)`` hears of each chunk's rows."""
    paths = export.paths()
    yield csv_line(".".join(path) for path in paths)
    chunk = []
    for item in iter_items(export, tenant_id, args, page_size):
        chunk += [csv_line(row) for row in _rows(item, paths, export.explode)]
        if len(chunk) >= page_size:
            if on_rows is not None:
                on_rows(len(chunk))
            yield "".join(chunk)
            chunk = []
    if chunk:
        if on_rows is not None:
            on_rows(len(chunk))
        yield "".join(chunk)
