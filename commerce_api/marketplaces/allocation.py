"""What a listing offers (DESIGN 14): its allocation rules over its warehouses' stock.

Desired quantity = ``fixed_quantity``, or else
``min(max_quantity, floor(sum available in its warehouses x allocation_pct / 100) -
stock_buffer)``, never below 0. Its warehouses are ``warehouse_ids`` (the tenant's own
warehouses that feed the listing) or, when null, every active own warehouse; inactive
warehouses hold no stock. A bundle's available stock in those warehouses is the minimum
over its components of floor(their available there / quantity), 0 with an archived
component. Listings fulfilled by the marketplace (FBA) take their quantity from it and
are not computed here.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..inventory.models import Stock, Warehouse
from ..products.bundles import bundle_available, components_of
from ..products.models import Listing
from ..sql import Statement, marks

# the listing's columns that ``Allocation.of`` reads
ALLOCATION_COLUMNS = (
    Listing.stock_buffer,
    Listing.max_quantity,
    Listing.allocation_pct,
    Listing.fixed_quantity,
    Listing.warehouse_ids,
)


@dataclass(frozen=True)
class Allocation:
    """A listing's allocation rules."""

    stock_buffer: int = 0
    max_quantity: int | None = None
    allocation_pct: int = 100
    fixed_quantity: int | None = None
    warehouse_ids: tuple[str, ...] | None = None

    @classmethod
    def of(cls, row: Any) -> "Allocation":
        """From a listing (model or dict with its columns); None: the defaults."""
        if row is None:
            return cls()
        get = row.get if isinstance(row, dict) else lambda name: getattr(row, name)
        warehouses = get("warehouse_ids")
        pct = get("allocation_pct")
        return cls(
            stock_buffer=int(get("stock_buffer") or 0),
            max_quantity=get("max_quantity"),
            allocation_pct=100 if pct is None else int(pct),
            fixed_quantity=get("fixed_quantity"),
            warehouse_ids=None if warehouses is None else tuple(warehouses),
        )


def allocate(available: int, rule: Allocation) -> int:
    """DESIGN 14's formula over the available stock of the listing's warehouses."""
    if rule.fixed_quantity is not None:
        return max(0, int(rule.fixed_quantity))
    quantity = max(0, int(available)) * rule.allocation_pct // 100 - rule.stock_buffer
    if rule.max_quantity is not None:
        quantity = min(int(rule.max_quantity), quantity)
    return max(0, quantity)


# available stock per (product, own active warehouse)
OWN_STOCK = Statement(
    "SELECT s.{Stock.product}, s.{Stock.warehouse}, s.{Stock.on_hand} - s.{Stock.reserved}"
    " FROM {Stock} s JOIN {Warehouse} w ON w.{Warehouse.id} = s.{Stock.warehouse}"
    " WHERE s.{Stock.product} IN ({ids}) AND w.{Warehouse.type} = 'own'"
    " AND w.{Warehouse.is_active}",
    Stock=Stock,
    Warehouse=Warehouse,
)
_CHUNK = 400


def own_stock(product_ids: Iterable[str]) -> dict[str, dict[str, int]]:
    """``{product id: {warehouse id: available}}`` in active own warehouses."""
    ids = sorted(set(product_ids))
    found: dict[str, dict[str, int]] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        for product_id, warehouse_id, available in OWN_STOCK.execute(
            chunk, ids=marks(len(chunk))
        ).fetchall():
            found.setdefault(product_id, {})[warehouse_id] = int(available)
    return found


def pooled(stock: dict[str, int], warehouse_ids: tuple[str, ...] | None) -> int:
    """The available stock of ``stock`` ({warehouse id: available}) in the warehouses."""
    if warehouse_ids is None:
        return sum(stock.values())
    return sum(stock.get(w, 0) for w in set(warehouse_ids))


def desired_quantities(listings: Iterable[tuple[str, str, Allocation]]) -> dict[str, int]:
    """``{key: quantity}`` for ``(key, product id, Allocation)`` items (keys: listing ids)."""
    items = list(listings)
    product_ids = {product_id for _, product_id, _ in items}
    bundles = components_of(product_ids)
    needed = product_ids | {c.product_id for parts in bundles.values() for c in parts}
    stock = own_stock(needed)
    result = {}
    for key, product_id, rule in items:
        parts = bundles.get(product_id)
        if parts:
            available = bundle_available(
                parts,
                {
                    c.product_id: pooled(stock.get(c.product_id, {}), rule.warehouse_ids)
                    for c in parts
                },
            )
        else:
            available = pooled(stock.get(product_id, {}), rule.warehouse_ids)
        result[key] = allocate(available, rule)
    return result
