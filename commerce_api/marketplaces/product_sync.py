"""Product sync (queue it, push a product to marketplaces and keep its listings) and
listing changes made through the API.

``sync_product`` is the work of the ``marketplace_sync`` job (``POST
/api/products/:sku/sync``, one product, once; the sync history names its calls
``push_product``). Pending listings are pushed continuously by the ``listing_push``
background loop instead (``listing_push_loop`` over ``listing_push``)."""

from collections.abc import Callable
from typing import Any

from ..db import for_update, write_transaction
from ..errors import ApiError
from ..ids import new_id
from ..inventory.models import Warehouse
from ..jobs.services import enqueue_job, tenant_first
from ..products import desired_state
from ..products.models import Listing
from ..products.services import find_product, locked_product, serialize_listing
from ..timeutil import now_ms
from . import services
from .allocation import Allocation, desired_quantities
from .calls import call_marketplace
from .listing_push import fulfilled_by, wire_body


def request_sync(
    tenant_id: str, sku: str, marketplaces: list[str] | None, created_by: str
) -> dict[str, Any]:
    """Queue a ``marketplace_sync`` job for the product; returns its summary."""
    with tenant_first(tenant_id):  # the tenant row before the product (one lock order)
        product = locked_product(tenant_id, sku)
        # each named marketplace must be connected (422); none named: every connected one
        marketplaces = services.resolve_sync_marketplaces(tenant_id, marketplaces)
        job = enqueue_job(
            tenant_id,
            "marketplace_sync",
            {"sku": product.sku, "product_id": product.id, "marketplaces": marketplaces},
            created_by=created_by,
            internal=True,
            check_capacity=True,
        )
    return {"job_id": job.id, "status": job.status, "marketplaces": marketplaces}


def _save_listing(listing, answer):
    """Record what the marketplace accepted for ``listing`` (the row the pushed body was
    read from; ``answer`` is checked already, ``answers.check_listing``).

    When the listing's desired state changed while the push was under way (a price
    recorded, a stock change), the marketplace now holds the older body; the listing keeps
    its newer values and becomes pending, so the push service sends them again (found by
    bench/soak.py: a sync's answer overwrote a price recorded meanwhile). A listing is
    created only without a price (held, ``hold_listing``), so a push always carries the
    listing's own price.
    """
    now = now_ms()
    # an answer without a price or currency leaves the listing's own (the pushed ones)
    price, currency = answer.get("price"), answer.get("currency")
    fields = {
        Listing.external_id: answer["external_id"],
        Listing.external_refs: answer.get("refs") or listing.external_refs,
        Listing.price: listing.price if price is None else price,
        Listing.currency: listing.currency if currency is None else currency,
        Listing.quantity: answer.get("quantity") or 0,
        Listing.status: answer.get("status") or "active",
        Listing.last_synced_at: now,
        Listing.updated_at: now,
        # the whole desired state went out: the marketplace has this version
        Listing.sync_status: "in_sync",
        Listing.synced_version: listing.version,
        Listing.last_sync_error: None,
    }
    with write_transaction():
        saved = (
            Listing.update(fields)
            .where((Listing.id == listing.id) & (Listing.version == listing.version))
            .execute()
        )
        if not saved:  # a newer desired state came meanwhile: it goes out next
            desired_state.push_again([listing.id], now=now)


# what a sync result says of a marketplace whose listing has no price (and a job's error)
PRICE_MISSING = (
    "LISTING_PRICE_MISSING",
    "The listing has no price, so it was not pushed (a marketplace would pick one): set it"
    " with PATCH /api/products/{sku}/listings/{marketplace} and the worker pushes it.",
)


def hold_listing(tenant_id: str, product: dict[str, Any], marketplace: str) -> None:
    """Keep a listing without a price off the marketplace: create it ``held`` (no price,
    never pushed) unless it exists; the price, once set (``update_listing``), makes it
    pending. ``product``: its row (``find_product``)."""
    now = now_ms()
    with write_transaction():
        Listing.insert(
            {
                Listing.id: new_id("listing"),
                Listing.tenant: tenant_id,
                Listing.product: product["id"],
                Listing.marketplace: marketplace,
                Listing.price: None,
                Listing.quantity: 0,
                Listing.status: "active",
                Listing.sync_status: "held",
                Listing.created_at: now,
                Listing.updated_at: now,
            }
        ).on_conflict_ignore().execute()


def sync_product(
    tenant_id: str,
    sku: str,
    marketplaces: list[str] | None,
    created_by: str,
    heartbeat: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Push the product to each marketplace (each on its own) and record every attempt.

    Returns ``{sku, succeeded, failed, unavailable, marketplaces: [{marketplace, status,
    external_id | error}]}``. A listing without a price (or no listing yet) is not pushed:
    it is kept ``held`` and reported ``held`` with ``LISTING_PRICE_MISSING``.
    """
    product = find_product(tenant_id, sku)
    if marketplaces is None:
        marketplaces = services.connected_marketplaces(tenant_id)
    results = []
    for marketplace in marketplaces:
        if heartbeat is not None:
            heartbeat()
        results.append(_sync_to(tenant_id, product, marketplace, created_by))
    return {
        "sku": product["sku"],
        "succeeded": sum(1 for r in results if r["status"] == "succeeded"),
        "failed": sum(1 for r in results if r["status"] != "succeeded"),
        "marketplaces": results,
    }


def _sync_to(tenant_id, product, marketplace, created_by):
    """Push ``product`` to one marketplace; its entry in ``sync_product``'s result."""
    connection = services.connection_for(tenant_id, marketplace)
    if connection is None:
        return {
            "marketplace": marketplace,
            "status": "failed",
            "error": {"code": "MARKETPLACE_NOT_CONNECTED", "message": "Not connected."},
        }
    listing = Listing.get_or_none(
        (Listing.product == product["id"]) & (Listing.marketplace == marketplace)
    )
    if listing is None or listing.price is None:
        hold_listing(tenant_id, product, marketplace)
        code, message = PRICE_MISSING
        message = message.format(sku=product["sku"], marketplace=marketplace)
        return {
            "marketplace": marketplace,
            "status": "held",
            "error": {"code": code, "message": message},
        }
    quantity = None
    if product["id"] not in fulfilled_by([product["id"]], marketplace):
        rule = Allocation.of(listing)
        quantity = desired_quantities([(product["id"], product["id"], rule)])[product["id"]]
    payload = wire_body(  # the product's own status, as the manual sync always sent
        product,
        status=product["status"],
        price=listing.price,
        currency=listing.currency,
        quantity=quantity,
    )
    try:
        answer, _ = call_marketplace(
            connection,
            "push_product",
            lambda connector, payload=payload: connector.push_product(payload),
            resource_type="product",
            resource_id=product["id"],
            sku=product["sku"],
            created_by=created_by,
        )
    except ApiError as error:
        status = "unavailable" if error.code == "MARKETPLACE_UNAVAILABLE" else "rejected"
        return {
            "marketplace": marketplace,
            "status": status,
            "error": {"code": error.code, "message": error.message},
        }
    _save_listing(listing, answer)
    return {
        "marketplace": marketplace,
        "status": "succeeded",
        "external_id": answer.get("external_id"),
    }


def _feeding_warehouses(tenant_id: str, changes: dict[str, Any]) -> list[str]:
    """``warehouse_ids`` checked: the tenant's own, active warehouses (sorted, once each)."""
    ids = sorted(set(changes["warehouse_ids"]))
    found = {
        w.id: w
        for w in Warehouse.select().where((Warehouse.tenant == tenant_id) & Warehouse.id.in_(ids))
    }
    for warehouse_id in ids:
        warehouse = found.get(warehouse_id)
        if warehouse is None:
            raise ApiError(
                "WAREHOUSE_NOT_FOUND",
                details={"warehouse_id": warehouse_id, "field": "warehouse_ids"},
            )
        if warehouse.is_readonly:
            raise ApiError(
                "READONLY_WAREHOUSE",
                f"{warehouse.type} stock is the marketplace's: only own warehouses feed a listing.",
                details={"warehouse_id": warehouse_id, "field": "warehouse_ids"},
            )
        if not warehouse.is_active:
            raise ApiError(
                "WAREHOUSE_INACTIVE",
                details={"warehouse_id": warehouse_id, "field": "warehouse_ids"},
            )
    return ids


def update_listing(
    tenant_id: str, sku: str, marketplace: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """Change a listing's ``price``, ``status`` or allocation (``stock_buffer``,
    ``max_quantity``, ``allocation_pct``, ``fixed_quantity``, ``warehouse_ids``; checked by
    the schema and here); the listing becomes pending and the worker pushes it. Returns
    the listing.

    A product not yet listed on a connected ``marketplace`` gets its listing here, held
    until it has a price: the price is set before anything is pushed. Unknown SKU: 404
    ``PRODUCT_NOT_FOUND``; no listing and ``marketplace`` not connected: 404
    ``LISTING_NOT_FOUND``. A change to the values it has already changes nothing.
    """
    select = Listing.select().where(Listing.marketplace == marketplace)
    with write_transaction():
        product = locked_product(tenant_id, sku)  # lock order: product, then its listings
        listing = for_update(select.where(Listing.product == product.id)).first()
        if listing is None and services.connection_for(tenant_id, marketplace, False):
            hold_listing(tenant_id, {"id": product.id}, marketplace)
            listing = for_update(select.where(Listing.product == product.id)).first()
        if listing is None:
            raise ApiError(
                "LISTING_NOT_FOUND",
                f"{sku} has no listing on {marketplace}.",
                details={"sku": sku, "marketplace": marketplace},
            )
        if changes.get("warehouse_ids") is not None:
            changes = {**changes, "warehouse_ids": _feeding_warehouses(tenant_id, changes)}
        changed = {
            name: value for name, value in changes.items() if getattr(listing, name) != value
        }
        fixed = changed.get("fixed_quantity", listing.fixed_quantity)
        cap = changed.get("max_quantity", listing.max_quantity)
        if fixed is not None and cap is not None:
            raise ApiError(
                "INVALID_ALLOCATION",
                "fixed_quantity and max_quantity cannot both apply: set the other to null.",
                details={"fixed_quantity": fixed, "max_quantity": cap},
            )
        if changed:
            now = now_ms()
            if "price" in changed:  # a newer price: older price pushes are outdated
                changed["price_version"] = Listing.price_version + 1
            desired_state.write_listing(listing.id, changed, now)
        fulfilled = product.id in fulfilled_by([product.id], marketplace)
        return serialize_listing(Listing.get_by_id(listing.id), fulfilled)
