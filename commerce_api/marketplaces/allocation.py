"""What a listing offers (DESIGN 14): its allocation rules over its warehouses' stock.

Desired quantity = ``fixed_quantity``, or else
``min(max_quantity, floor(sum available in its warehouses x allocation_pct / 100) -
stock_buffer)``, never below 0. Its warehouses are ``warehouse_ids`` (the tenant's own
warehouses that feed the listing) or, when null, every active own warehouse; inactive
warehouses hold no stock. A bundle's available stock in those warehouses is the minimum
over its components of floor(their available there / quantity), 0 with an archived
component. Listings fulfilled by the marketplace (FBA) take their quantity from it and
are not computed here. A connector that sells one listing from several places (Shopify
locations) splits that quantity over them with ``available_by_place`` and ``spread``.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..inventory.models import Stock, Warehouse
from ..products.bundles import bundle_available, components_of
from ..products.models import Listing
from ..sql import Statement

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
    " WHERE s.{Stock.product} IN ({in:ids}) AND w.{Warehouse.type} = 'own'"
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
        for product_id, warehouse_id, available in OWN_STOCK.execute({"ids": chunk}).fetchall():
            found.setdefault(product_id, {})[warehouse_id] = int(available)
    return found


def pooled(stock: dict[str, int], warehouse_ids: tuple[str, ...] | None) -> int:
    """The available stock of ``stock`` ({warehouse id: available}) in the warehouses."""
    if warehouse_ids is None:
        return sum(stock.values())
    return sum(stock.get(w, 0) for w in set(warehouse_ids))


def _stock_of(items):
    product_ids = {product_id for _, product_id, _ in items}
    bundles = components_of(product_ids)
    needed = product_ids | {c.product_id for parts in bundles.values() for c in parts}
    return own_stock(needed), bundles


def _available(product_id, warehouse_ids, stock, bundles):
    parts = bundles.get(product_id)
    if parts:
        return bundle_available(
            parts,
            {c.product_id: pooled(stock.get(c.product_id, {}), warehouse_ids) for c in parts},
        )
    return pooled(stock.get(product_id, {}), warehouse_ids)


def desired_quantities(listings: Iterable[tuple[str, str, Allocation]]) -> dict[str, int]:
    """``{key: quantity}`` for ``(key, product id, Allocation)`` items (keys: listing ids)."""
    items = list(listings)
    stock, bundles = _stock_of(items)
    return {
        key: allocate(_available(product_id, rule.warehouse_ids, stock, bundles), rule)
        for key, product_id, rule in items
    }


def spread(quantity: int, available: dict[str, int]) -> dict[str, int]:
    """``quantity`` split over places (``{place: available there}``, in order) in proportion
    to what each holds, the remainders to the largest fractions (ties: the first place);
    all of it to the first place when none holds any."""
    places = list(available)
    if not places:
        return {}
    held = {place: max(0, int(available[place])) for place in places}
    total = sum(held.values())
    if total <= 0:
        return {place: (quantity if n == 0 else 0) for n, place in enumerate(places)}
    shares = {place: quantity * held[place] // total for place in places}
    left = quantity - sum(shares.values())
    by_fraction = sorted(places, key=lambda p: (-(quantity * held[p] % total), places.index(p)))
    for place in by_fraction[:left]:
        shares[place] += 1
    return shares


def available_by_place(
    listings: Iterable[tuple[str, str, Allocation]], places: dict[str, str]
) -> dict[str, dict[str, int]]:
    """``{key: {place: available}}``: what each listing's warehouses hold at each place
    (``places``: warehouse id -> place, e.g. a Shopify location), over the same stock
    ``desired_quantities`` reads. A warehouse of the listing that maps to no place is no
    place of the listing; a listing with none has ``{}``. With ``spread`` this splits a
    listing's desired quantity over its places."""
    items = list(listings)
    stock, bundles = _stock_of(items)
    result = {}
    for key, product_id, rule in items:
        feeding = places if rule.warehouse_ids is None else rule.warehouse_ids
        groups: dict[str, list[str]] = {}
        for warehouse_id in feeding:
            if warehouse_id in places:
                groups.setdefault(places[warehouse_id], []).append(warehouse_id)
        result[key] = {
            place: _available(product_id, tuple(ids), stock, bundles)
            for place, ids in groups.items()
        }
    return result
