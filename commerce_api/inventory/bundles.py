"""Bundles and stock: the checks of a bundle's components that need stock, and a bundle's
derived, read-only inventory record (DESIGN 14)."""

from typing import Any

from ..errors import ApiError
from ..products.bundles import Component, bundle_available, component_error, components_of
from .models import MARKETPLACE_TYPES, InventorySummary, Stock, Warehouse


def check_components(tenant_id: str, bundle_id: str, component_ids: list[str]) -> ApiError | None:
    """A product that holds stock cannot become a bundle (its stock would be lost from
    sight), and a component stocked only in marketplace warehouses (FBA/FBS) cannot be
    one (its orders reserve own stock). Registered with ``products.bundles``."""
    held = (
        Stock.select(Stock.id)
        .where(
            (Stock.product == bundle_id)
            & ((Stock.on_hand > 0) | (Stock.reserved > 0) | (Stock.incoming > 0))
        )
        .exists()
    )
    if held:
        return ApiError(
            "BUNDLE_STOCK_IS_DERIVED",
            "The product holds stock (or has stock in transit to it): set it to 0 and "
            "receive or cancel its transfers before making the product a bundle.",
            details={"field": "components"},
        )
    rows = (
        Stock.select(Stock.product, Stock.sku, Warehouse.type)
        .join(Warehouse)
        .where(Stock.product.in_(component_ids))
        .tuples()
    )
    kinds: dict[str, set[str]] = {}
    skus = {}
    for product_id, sku, kind in rows:
        kinds.setdefault(product_id, set()).add(kind)
        skus[product_id] = sku
    for product_id in sorted(kinds):
        if kinds[product_id] <= set(MARKETPLACE_TYPES):
            return component_error(
                f"{skus[product_id]} is stocked only in marketplace warehouses (FBA/FBS); "
                "a bundle's components are reserved from own stock.",
                sku=skus[product_id],
                field="components",
            )
    return None


def drop_own_record(tenant_id: str, product_id: str) -> None:
    """A product becomes a bundle: its own inventory record (empty: ``check_components``
    refused one that holds stock) goes, so that no list, filter or total shows a record the
    bundle does not have; its empty stock rows stay with their ledger history. Registered
    with ``products.bundles`` (``register_becoming_bundle``)."""
    InventorySummary.delete().where(
        (InventorySummary.tenant == tenant_id) & (InventorySummary.product == product_id)
    ).execute()


def _available(components: list[Component]) -> tuple[dict[str, int], dict[str, int]]:
    """``({component id: total available}, {component id: total on hand})``."""
    ids = [c.product_id for c in components]
    rows = (
        InventorySummary.select(
            InventorySummary.product,
            InventorySummary.total_available,
            InventorySummary.total_on_hand,
        )
        .where(InventorySummary.product.in_(ids))
        .tuples()
    )
    available, on_hand = {}, {}
    for product_id, total_available, total_on_hand in rows:
        available[product_id], on_hand[product_id] = total_available, total_on_hand
    return available, on_hand


def derived_record(product: dict[str, Any]) -> dict[str, Any] | None:
    """The inventory record of a bundle, derived from its components (None: not a bundle).

    ``total_available`` is the minimum over the components of floor(available / quantity)
    (0 with an archived component); the bundle holds nothing itself, so ``total_on_hand``
    shows the same number, ``total_reserved`` is 0 and ``warehouses`` is empty.
    """
    components = components_of([product["id"]]).get(product["id"])
    if not components:
        return None
    available, _ = _available(components)
    total = bundle_available(components, available)
    return {
        "sku": product["sku"],
        "title": product["title"],
        "product": product["id"],
        "total_on_hand": total,
        "total_reserved": 0,
        "total_available": total,
        "safety_stock": 0,
        "status": "out_of_stock" if total <= 0 else "normal",
        "warehouses": [],
        "updated_at": product["updated_at"],
    }
