"""Product sync (queue it, push a product to marketplaces and keep its listings) and
listing changes made through the API."""

from collections.abc import Callable
from typing import Any

from ..db import for_update, write_transaction
from ..errors import ApiError
from ..ids import new_id
from ..jobs.services import enqueue_job, tenant_first
from ..products.listings import mark_listings_pending
from ..products.models import Listing
from ..products.services import find_product, locked_product, serialize_listing
from ..timeutil import now_ms
from . import services
from .calls import call_marketplace
from .listing_sync import desired_quantity, fulfilled_by, own_available, wire_body


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


def _save_listing(tenant_id, product, marketplace, answer, listing=None):
    """Create or update the listing in one statement: an upsert on (product, marketplace),
    so two saves of the same listing at once (two sync jobs, two processes) never collide
    on the unique index, on SQLite as on PostgreSQL. ``answer`` is checked already
    (``answers.check_listing``).

    ``listing`` is the row the pushed body was read from: when its desired state changed
    while the push was under way (a price recorded, a stock change), the marketplace now
    holds the older body; the listing keeps its newer values and becomes pending, so the
    push service sends them again (found by bench/soak.py: a sync's answer overwrote a
    price recorded meanwhile).
    """
    now = now_ms()
    fields = {
        Listing.external_id: answer["external_id"],
        Listing.price: answer.get("price"),
        Listing.currency: answer.get("currency"),
        Listing.quantity: answer.get("quantity") or 0,
        Listing.status: answer.get("status") or "active",
        Listing.last_synced_at: now,
        Listing.updated_at: now,
    }
    if listing is not None:
        with write_transaction():
            saved = (
                Listing.update(fields)
                .where((Listing.id == listing.id) & (Listing.version == listing.version))
                .execute()
            )
            if not saved:
                mark_listings_pending(listing_ids=[listing.id], now=now)
        return
    with write_transaction():
        Listing.insert(
            {
                Listing.id: new_id("listing"),
                Listing.tenant: tenant_id,
                Listing.product: product["id"],
                Listing.marketplace: marketplace,
                Listing.created_at: now,
                **fields,
            }
        ).on_conflict(
            conflict_target=[Listing.product, Listing.marketplace], update=fields
        ).execute()


def sync_product(
    tenant_id: str,
    sku: str,
    marketplaces: list[str] | None,
    created_by: str,
    heartbeat: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Push the product to each marketplace (each on its own) and record every attempt.

    Returns ``{sku, succeeded, failed, unavailable, marketplaces: [{marketplace, status,
    external_id | error}]}``.
    """
    product = find_product(tenant_id, sku)
    if marketplaces is None:
        marketplaces = services.connected_marketplaces(tenant_id)
    results = []
    for marketplace in marketplaces:
        if heartbeat is not None:
            heartbeat()
        connection = services.connection_for(tenant_id, marketplace)
        if connection is None:
            results.append(
                {
                    "marketplace": marketplace,
                    "status": "failed",
                    "error": {"code": "MARKETPLACE_NOT_CONNECTED", "message": "Not connected."},
                }
            )
            continue
        listing = Listing.get_or_none(
            (Listing.product == product["id"]) & (Listing.marketplace == marketplace)
        )
        quantity = None
        if product["id"] not in fulfilled_by([product["id"]], marketplace):
            available = own_available([product["id"]]).get(product["id"], 0)
            quantity = desired_quantity(available, listing.stock_buffer if listing else 0)
        payload = wire_body(  # the product's own status, as the manual sync always sent
            product,
            status=product["status"],
            price=listing.price if listing is not None else None,
            currency=listing.currency if listing is not None else None,
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
            results.append(
                {
                    "marketplace": marketplace,
                    "status": status,
                    "error": {"code": error.code, "message": error.message},
                }
            )
            continue
        _save_listing(tenant_id, product, marketplace, answer, listing)
        results.append(
            {
                "marketplace": marketplace,
                "status": "succeeded",
                "external_id": answer.get("external_id"),
            }
        )
    return {
        "sku": product["sku"],
        "succeeded": sum(1 for r in results if r["status"] == "succeeded"),
        "failed": sum(1 for r in results if r["status"] != "succeeded"),
        "marketplaces": results,
    }


def update_listing(
    tenant_id: str, sku: str, marketplace: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """Change a listing's ``price``, ``stock_buffer`` or ``status`` (checked by the
    schema); the listing becomes pending and the worker pushes it. Returns the listing.

    Unknown SKU: 404 ``PRODUCT_NOT_FOUND``; no listing on ``marketplace``: 404
    ``LISTING_NOT_FOUND``. A change to the values it has already changes nothing.
    """
    with write_transaction():
        product = locked_product(tenant_id, sku)  # lock order: product, then its listings
        listing = for_update(
            Listing.select().where(
                (Listing.product == product.id) & (Listing.marketplace == marketplace)
            )
        ).first()
        if listing is None:
            raise ApiError(
                "LISTING_NOT_FOUND",
                f"{sku} has no listing on {marketplace}.",
                details={"sku": sku, "marketplace": marketplace},
            )
        changed = {
            name: value for name, value in changes.items() if getattr(listing, name) != value
        }
        if changed:
            now = now_ms()
            if "price" in changed:  # a newer price: older price pushes are outdated
                changed["price_version"] = Listing.price_version + 1
            Listing.update(**changed, updated_at=now).where(Listing.id == listing.id).execute()
            mark_listings_pending(listing_ids=[listing.id], now=now)
        return serialize_listing(Listing.get_by_id(listing.id))
