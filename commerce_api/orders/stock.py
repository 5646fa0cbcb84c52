"""An order's stock effects, through the inventory reservation service.

Open FBM/FBS orders hold reservations in own warehouses; a shipment consumes them (an
``on_hand`` decrease, reason ``sale``) and releases what was not shipped; a cancellation
releases them. Every function runs inside the caller's (the order change's) transaction.

What an order holds is kept on the order (``Order.reserved``) as
``{sku: {"n": reservations made, "held": [[reference, quantity], ...]}}``. The inventory
service is idempotent per (reference, sku) and never reserves twice under one pair, even
after a release, so each new reservation of a SKU gets a new reference: the order id for
the first, ``<order id>#2``, ``#3``... after it.

An order line for a bundle holds its components (``expand``): ``reserved`` is keyed by the
components' SKUs.

An order from a marketplace is a fact: when stock is short, what is available is reserved,
the order is recorded with ``stock_shortage`` and the reservation is topped up whenever
the order arrives again or is shipped (see docs/decisions.md).
"""

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ApiError
from ..inventory import reservations
from ..products.bundles import expand_targets


def targets_of(lines: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{sku: quantity}`` an order's lines call for (a SKU may appear on several lines)."""
    targets = {}
    for line in lines:
        targets[line["sku"]] = targets.get(line["sku"], 0) + int(line["quantity"])
    return targets


def expand(tenant_id: str, quantities: dict[str, int]) -> dict[str, int]:
    """``{sku: quantity}`` with each bundle replaced by its components: a bundle holds no
    stock, its order lines reserve, ship and release its components (DESIGN 14).
    Expanding twice changes nothing (a component is never a bundle)."""
    return expand_targets(tenant_id, quantities)


def held_quantity(reserved: dict[str, Any] | None, sku: str) -> int:
    entry = (reserved or {}).get(sku) or {}
    return sum(quantity for _, quantity in entry.get("held") or [])


def _next_reference(order_id, entry):
    return order_id if entry["n"] == 0 else f"{order_id}#{entry['n'] + 1}"


def _reserve(tenant_id, order_id, sku, quantity, entry, created_by):
    """Reserve up to ``quantity`` under a new reference; returns what was reserved."""
    reference = _next_reference(order_id, entry)
    try:
        reservations.reserve_stock(
            tenant_id, sku, quantity, reference=reference, created_by=created_by
        )
    except ApiError as error:
        if error.code != "INSUFFICIENT_STOCK":
            return 0  # e.g. a SKU that is not in the catalogue: nothing can be held
        available = int((error.details or {}).get("available") or 0)
        if available <= 0:
            return 0
        quantity = min(available, quantity)
        try:
            reservations.reserve_stock(
                tenant_id, sku, quantity, reference=reference, created_by=created_by
            )
        except ApiError:
            return 0
    entry["n"] += 1
    entry["held"].append([reference, quantity])
    return quantity


def _release_sku(tenant_id, entry, sku, created_by):
    for reference, _ in entry["held"]:
        reservations.release_stock(tenant_id, reference, created_by=created_by, sku=sku)
    entry["held"] = []


def sync_reservations(
    tenant_id: str,
    order_id: str,
    reserved: dict[str, Any] | None,
    targets: dict[str, int],
    created_by: str,
) -> tuple[dict[str, Any], bool]:
    """Make the order hold ``targets`` (as far as stock allows); returns the new
    ``reserved`` and whether stock is short.

    Nothing is written when the order already holds its targets, so an order arriving
    again unchanged changes no stock.
    """
    reserved = copy.deepcopy(reserved or {})
    targets = expand(tenant_id, targets)
    if len(set(targets) | set(reserved)) > 1:
        reservations.lock_for_changes(tenant_id, set(targets) | set(reserved))
    short = False
    # SKU order: concurrent transactions lock stock rows in the same order
    for sku in sorted(set(targets) | set(reserved)):
        want = targets.get(sku, 0)
        entry = reserved.setdefault(sku, {"n": 0, "held": []})
        have = held_quantity(reserved, sku)
        if have > want:
            # fewer wanted than held: give everything back and reserve the new amount
            _release_sku(tenant_id, entry, sku, created_by)
            have = 0
        if have < want:
            have += _reserve(tenant_id, order_id, sku, want - have, entry, created_by)
        if have < want:
            short = True
    return reserved, short


def release_all(tenant_id: str, reserved: dict[str, Any] | None, created_by: str) -> dict[str, Any]:
    """Give back everything the order holds (a cancellation); returns the new ``reserved``."""
    reserved = copy.deepcopy(reserved or {})
    if len(reserved) > 1:
        reservations.lock_for_changes(tenant_id, reserved)
    for sku in sorted(reserved):
        _release_sku(tenant_id, reserved[sku], sku, created_by)
    return reserved


def consume_for_shipment(
    tenant_id: str, reserved: dict[str, Any] | None, shipped: dict[str, int], created_by: str
) -> dict[str, Any]:
    """Consume what was shipped (``{sku: quantity}``) and release the rest."""
    reserved = copy.deepcopy(reserved or {})
    if len(reserved) > 1:
        reservations.lock_for_changes(tenant_id, reserved)
    for sku in sorted(reserved):
        entry = reserved[sku]
        left = shipped.get(sku, 0)
        for reference, quantity in entry["held"]:
            take = min(quantity, left)
            if take > 0:
                # the quantity is cumulative per (reference, sku): this is the first consume
                reservations.consume_stock(
                    tenant_id, reference, created_by=created_by, sku=sku, quantity=take
                )
                left -= take
            if take < quantity:
                reservations.release_stock(tenant_id, reference, created_by=created_by, sku=sku)
        entry["held"] = []
    return reserved


def consume_shipped(
    tenant_id: str,
    order_id: str,
    reserved: dict[str, Any] | None,
    shipped: dict[str, int],
    created_by: str,
) -> tuple[dict[str, Any], bool]:
    """Top the reservation up to what was shipped where stock allows, then consume it."""
    shipped = expand(tenant_id, shipped)
    wanted = {sku: max(quantity, held_quantity(reserved, sku)) for sku, quantity in shipped.items()}
    reserved, _ = sync_reservations(tenant_id, order_id, reserved, wanted, created_by)
    short = any(held_quantity(reserved, sku) < qty for sku, qty in shipped.items())
    return consume_for_shipment(tenant_id, reserved, shipped, created_by), short
