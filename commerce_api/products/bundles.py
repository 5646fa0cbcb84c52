"""Bundles (DESIGN 14): a product made of other products, holding no stock of its own.

A bundle's ``components`` are ``[{sku, quantity}]``: one level (a component is not itself
a bundle, and a bundle is no component), no self-reference, positive integer quantities,
existing SKUs. Its availability is the minimum over its components of
``floor(available / quantity)``, 0 when a component is archived; orders for it reserve,
ship and release the components. Checks that need stock (a component stocked only in
marketplace warehouses, a product that holds stock becoming a bundle) are registered by
``inventory``, which lives above ``products`` (the pattern of ``register_open_order_check``).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..db import is_postgres
from ..errors import ApiError
from ..timeutil import now_ms
from .models import BundleComponent, Listing, Product

MAX_COMPONENTS = 50
_CHUNK = 400  # ids per IN (...) list

# ``check(tenant_id, bundle_id, component ids) -> ApiError | None``, registered by
# create_app (inventory's stock checks).
_COMPONENT_CHECKS: list[Callable[[str, str, list[str]], ApiError | None]] = []


def register_component_check(check: Callable[[str, str, list[str]], ApiError | None]) -> None:
    """Register a check of a bundle's new components; registering it again changes nothing."""
    if check not in _COMPONENT_CHECKS:
        _COMPONENT_CHECKS.append(check)


# ``hook(tenant_id, product_id)``, run in the transaction that makes a product a bundle
# (after every check passed), registered by create_app (inventory drops the product's own,
# empty inventory record: a bundle's record is derived).
_BECOMING_BUNDLE: list[Callable[[str, str], None]] = []


def register_becoming_bundle(hook: Callable[[str, str], None]) -> None:
    """Register what happens when a product becomes a bundle; once per hook."""
    if hook not in _BECOMING_BUNDLE:
        _BECOMING_BUNDLE.append(hook)


def registered_hooks() -> tuple[Callable, ...]:
    """The component checks and becoming-a-bundle hooks registered (the worker's self-check)."""
    return (*_COMPONENT_CHECKS, *_BECOMING_BUNDLE)


@dataclass(frozen=True)
class Component:
    """One component of a bundle as its availability needs it."""

    product_id: str
    sku: str
    quantity: int
    archived: bool = False


def bundle_stock_error(sku: str) -> ApiError:
    return ApiError(
        "BUNDLE_STOCK_IS_DERIVED",
        f"{sku} is a bundle: its stock follows its components; change theirs.",
        details={"sku": sku},
    )


def component_error(message: str, **details: Any) -> ApiError:
    return ApiError("INVALID_BUNDLE_COMPONENT", message, details=details)


def _chunks(ids: Iterable[str]):
    ids = sorted(set(ids))
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


def bundle_ids(product_ids: Iterable[str]) -> set[str]:
    """The bundles among ``product_ids``."""
    found: set[str] = set()
    for chunk in _chunks(product_ids):
        query = (
            BundleComponent.select(BundleComponent.bundle)
            .where(BundleComponent.bundle.in_(chunk))
            .distinct()
            .tuples()
        )
        found.update(row[0] for row in query)
    return found


def bundles_using(component_ids: Iterable[str]) -> set[str]:
    """The bundles that have one of ``component_ids`` as a component."""
    found: set[str] = set()
    for chunk in _chunks(component_ids):
        query = (
            BundleComponent.select(BundleComponent.bundle)
            .where(BundleComponent.component.in_(chunk))
            .distinct()
            .tuples()
        )
        found.update(row[0] for row in query)
    return found


def with_bundles(product_ids: Iterable[str]) -> set[str]:
    """``product_ids`` and the bundles that use them (whose availability follows theirs)."""
    ids = set(product_ids)
    return ids | bundles_using(ids)


def lock_listings_with_bundles(product_ids: Iterable[str]) -> None:
    """PostgreSQL, inside the caller's transaction: lock the listings of ``product_ids``
    and of the bundles that use them, by id, at once. A transaction that then marks them
    in several statements (a product and its bundles, an order's components one by one)
    takes no listing lock out of order (the push service records outcomes by listing id)."""
    if not is_postgres():
        return
    ids = sorted(with_bundles(product_ids))
    for chunk in _chunks(ids):
        list(
            Listing.select(Listing.id)
            .where(Listing.product.in_(chunk))
            .order_by(Listing.id)
            .for_update()
            .tuples()
        )


def components_of(bundle_ids_: Iterable[str]) -> dict[str, list[Component]]:
    """``{bundle id: [Component]}`` (in SKU order) for the bundles among the ids."""
    found: dict[str, list[Component]] = {}
    for chunk in _chunks(bundle_ids_):
        query = (
            BundleComponent.select(
                BundleComponent.bundle,
                BundleComponent.component,
                BundleComponent.sku,
                BundleComponent.quantity,
                Product.status,
            )
            .join(Product, on=(Product.id == BundleComponent.component))
            .where(BundleComponent.bundle.in_(chunk))
            .order_by(BundleComponent.bundle, BundleComponent.sku)
            .tuples()
        )
        for bundle, component, sku, quantity, status in query:
            found.setdefault(bundle, []).append(
                Component(component, sku, quantity, status == "archived")
            )
    return found


def bundle_available(components: Iterable[Component], available: dict[str, int]) -> int:
    """What a bundle offers given ``{component id: available}``: the minimum over its
    components of floor(available / quantity); 0 with an archived component (or none)."""
    result = None
    for component in components:
        if component.archived:
            return 0
        units = max(0, available.get(component.product_id, 0)) // component.quantity
        result = units if result is None else min(result, units)
    return result or 0


def components_payload(bundle_id: str) -> list[dict[str, Any]]:
    """A product's ``components`` as the API shows them (empty: not a bundle)."""
    return [
        {"sku": c.sku, "quantity": c.quantity}
        for c in components_of([bundle_id]).get(bundle_id, [])
    ]


def expand_targets(tenant_id: str, targets: dict[str, int]) -> dict[str, int]:
    """``{sku: quantity}`` with every bundle replaced by its components (times the bundle's
    quantity): what an order's stock effects apply to."""
    skus = sorted(targets)
    bundles: dict[str, list[Component]] = {}
    for start in range(0, len(skus), _CHUNK):
        chunk = skus[start : start + _CHUNK]
        query = (
            BundleComponent.select(
                Product.sku,
                BundleComponent.component,
                BundleComponent.sku,
                BundleComponent.quantity,
            )
            .join(Product, on=(Product.id == BundleComponent.bundle))
            .where((Product.tenant == tenant_id) & Product.sku.in_(chunk))
            .tuples()
        )
        for bundle_sku, component, sku, quantity in query:
            bundles.setdefault(bundle_sku, []).append(Component(component, sku, quantity))
    if not bundles:
        return dict(targets)
    expanded: dict[str, int] = {}
    for sku, quantity in targets.items():
        for component in bundles.get(sku) or [Component("", sku, 1)]:
            expanded[component.sku] = expanded.get(component.sku, 0) + quantity * component.quantity
    return expanded


def _wanted_components(product: Product, components: list[dict[str, Any]] | None):
    """``{sku: quantity}`` of the components asked for (never the product, each SKU once)."""
    wanted: dict[str, int] = {}
    for item in components or []:
        sku, quantity = item["sku"], item["quantity"]
        if sku == product.sku:
            raise component_error("A bundle cannot contain itself.", sku=sku)
        if sku in wanted:
            raise component_error("Each component SKU appears once.", sku=sku)
        wanted[sku] = quantity
    return wanted


def _component_products(tenant_id: str, wanted: dict[str, int]) -> dict[str, str]:
    """``{sku: product id}`` of the components: each exists and is no bundle itself."""
    rows = list(
        Product.select(Product.id, Product.sku)
        .where((Product.tenant == tenant_id) & Product.sku.in_(sorted(wanted)))
        .tuples()
    )
    found = dict((sku, pid) for pid, sku in rows)
    for sku in sorted(wanted):
        if sku not in found:
            raise ApiError(
                "PRODUCT_NOT_FOUND",
                f"The component {sku} does not exist.",
                details={"sku": sku, "field": "components"},
            )
    nested = bundle_ids(found.values())
    if nested:
        sku = next(s for s, pid in sorted(found.items()) if pid in nested)
        raise component_error(
            f"{sku} is itself a bundle; bundles have one level.", sku=sku, field="components"
        )
    return found


def set_components(
    tenant_id: str, product: Product, components: list[dict[str, Any]] | None
) -> bool:
    """Inside the caller's transaction (the product locked): make ``components`` the
    product's components (``[]`` or None: not a bundle). Returns whether anything changed.

    Refused with INVALID_BUNDLE_COMPONENT (a component that is a bundle, the product itself,
    a repeated SKU, a product that is a component of another bundle, or what a registered
    check refuses) and PRODUCT_NOT_FOUND (an unknown component SKU).
    """
    wanted = _wanted_components(product, components)
    current = {c.sku: c.quantity for c in components_of([product.id]).get(product.id, [])}
    if current == wanted:
        return False
    BundleComponent.delete().where(BundleComponent.bundle == product.id).execute()
    if not wanted:
        return True
    if bundles_using([product.id]):
        raise component_error(
            f"{product.sku} is a component of another bundle; bundles have one level.",
            sku=product.sku,
        )
    found = _component_products(tenant_id, wanted)
    for check in _COMPONENT_CHECKS:
        error = check(tenant_id, product.id, sorted(found.values()))
        if error is not None:
            raise error
    if not current:
        for hook in _BECOMING_BUNDLE:
            hook(tenant_id, product.id)
    now = now_ms()
    BundleComponent.insert_many(
        [
            {
                "tenant": tenant_id,
                "bundle": product.id,
                "component": found[sku],
                "sku": sku,
                "quantity": quantity,
                "created_at": now,
            }
            for sku, quantity in sorted(wanted.items())
        ]
    ).execute()
    return True
