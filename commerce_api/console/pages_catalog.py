"""Overview, Products (with listings, push now) and Inventory (by warehouse, set, ledger)."""

from flask import render_template, request

from .gateway import segment
from .web import (
    api,
    args_of,
    bp,
    done,
    first_error,
    form_int,
    form_text,
    present,
    render,
    status_of,
)

LIST_LIMIT = 25
OVERVIEW_LISTINGS = 10  # the first page of pending and of failed listings
NEW_COMPONENTS = 3  # blank component rows under a product's components
STOCK_REASONS = (
    "cycle_count",
    "supplier_receipt",
    "damage",
    "loss",
    "return_restock",
    "transfer_in",
    "transfer_out",
    "correction",
)


@bp.route("")
@bp.route("/")
def overview():
    """What needs attention: listings pending or in error (with the marketplace's message),
    failed syncs, jobs, webhook endpoints, connections."""
    listings = {
        status: api("GET", "/api/listings", {"sync_status": status, "limit": OVERVIEW_LISTINGS})
        for status in ("error", "pending")
    }
    failed_syncs = api("GET", "/api/marketplaces/sync-history", {"status": "failed", "limit": 10})
    jobs = {
        status: api("GET", "/api/ai-jobs", {"status": status, "limit": 1})
        for status in ("queued", "running", "failed")
    }
    webhooks = api("GET", "/api/webhooks", {"limit": 50})
    connections = api("GET", "/api/marketplaces", {"limit": 50})
    return render(
        "console/overview.html",
        listings=listings,
        failed_syncs=failed_syncs,
        jobs=jobs,
        webhooks=webhooks,
        connections=connections,
    )


@bp.route("/products")
def products():
    """Products: search, filters, pages by cursor."""
    query = args_of("search", "status", "marketplace", "category", "cursor")
    answer = api("GET", "/api/products", {**query, "limit": LIST_LIMIT})
    return render(
        "console/products.html",
        status_of(answer),
        answer=answer,
        query=query,
        errors=[answer.error],
    )


def _listings(sku):
    return api("GET", f"/api/products/{segment(sku)}")


def product_page(sku, status=200, errors=()):
    """A product with its listings (allocation, sync status, the marketplace's last error),
    its stock, and a bundle's components with their availability."""
    answer = _listings(sku)
    stock = components = warehouses = None
    if answer.ok:
        stock = api("GET", f"/api/inventory/{segment(sku)}")
        warehouses = api("GET", "/api/inventory/warehouses", {"limit": 100, "type": "own"})
        parts = answer.data.get("components") or []
        if parts:  # each component's stock record (a bundle has a few; the API bounds them)
            components = {
                c["sku"]: api("GET", f"/api/inventory/{segment(c['sku'])}") for c in parts
            }
    return render(
        "console/product.html",
        status if status != 200 else status_of(answer),
        sku=sku,
        answer=answer,
        stock=stock,
        components=components,
        warehouses=warehouses,
        new_components=NEW_COMPONENTS,
        errors=[*errors, answer.error],
    )


@bp.route("/products/<string:sku>")
def product(sku):
    """A product with its listings: price, sync status, the marketplace's last error."""
    return product_page(sku)


@bp.route("/products/<string:sku>/listings")
def product_listings(sku):
    """The listings table alone (htmx polls it while a push is pending)."""
    answer = _listings(sku)
    return render_template("console/_listings.html", sku=sku, answer=answer)


@bp.route("/products/<string:sku>/push", methods=["POST"])
def push_product(sku):
    """Push now: queue the product's listings for a push to their marketplaces."""
    answer = api("POST", f"/api/products/{segment(sku)}/sync", body={})
    if answer.ok:
        return done("console.product", "pushed", sku=sku)
    return product_page(sku, answer.status, [answer.error])


@bp.route("/inventory")
def inventory():
    """Stock by SKU and warehouse, with filters and pages by cursor."""
    query = args_of("sku", "status", "warehouse_id", "cursor")
    answer = api("GET", "/api/inventory", {**query, "limit": LIST_LIMIT})
    warehouses = api("GET", "/api/inventory/warehouses", {"limit": 100})
    return render(
        "console/inventory.html",
        status_of(answer),
        answer=answer,
        warehouses=warehouses,
        query=query,
        errors=[answer.error],
    )


def stock_page(sku, status=200, errors=(), form=None):
    stock = api("GET", f"/api/inventory/{segment(sku)}")
    warehouses = api("GET", "/api/inventory/warehouses", {"limit": 100, "is_active": "true"})
    query = args_of("cursor", "warehouse_id", "reason")
    ledger = api("GET", f"/api/inventory/{segment(sku)}/adjustments", {**query, "limit": 25})
    components = None
    if stock.ok and not stock.data.get("warehouses") and ledger.status == 404:
        # a bundle: a derived record and no ledger of its own (its components have them)
        product = api("GET", f"/api/products/{segment(sku)}", {"fields": "sku,components"})
        components = (product.data or {}).get("components") or None
        if components:
            ledger = None
    return render(
        "console/stock.html",
        status if status != 200 else status_of(stock, ledger),
        sku=sku,
        stock=stock,
        components=components,
        warehouses=warehouses,
        ledger=ledger,
        query=query,
        reasons=STOCK_REASONS,
        form=form or {},
        errors=[*errors, first_error(stock, ledger)],
    )


@bp.route("/inventory/<string:sku>")
def stock(sku):
    """One SKU: its level per warehouse, the set-level form, its ledger."""
    return stock_page(sku)


@bp.route("/inventory/<string:sku>/set", methods=["POST"])
def set_stock(sku):
    """Set the on-hand level of an SKU in a warehouse (a ledger entry with its reason)."""
    body = present(
        warehouse_id=form_text("warehouse_id"),
        quantity=form_int("quantity"),
        reason=form_text("reason"),
        note=form_text("note"),
    )
    answer = api("PUT", f"/api/inventory/{segment(sku)}", body=body)
    if answer.ok:
        return done("console.stock", "stock-set", sku=sku)
    return stock_page(sku, answer.status, [answer.error], form=request.form)


@bp.route("/inventory/<string:sku>/safety-stock", methods=["POST"])
def set_safety_stock(sku):
    """Set the available level at or below which the SKU counts as low."""
    body = present(safety_stock=form_int("safety_stock"))
    answer = api("PATCH", f"/api/inventory/{segment(sku)}", body=body)
    if answer.ok:
        return done("console.stock", "safety-stock", sku=sku)
    return stock_page(sku, answer.status, [answer.error], form=request.form)


@bp.route("/listings")
def listings():
    """Every listing by sync status and marketplace, by cursor (the Overview's "all")."""
    query = args_of("sync_status", "marketplace", "cursor")
    answer = api("GET", "/api/listings", {**query, "limit": LIST_LIMIT})
    return render(
        "console/listings.html",
        status_of(answer),
        answer=answer,
        query=query,
        statuses=("pending", "error", "submitted", "held", "in_sync"),
        errors=[answer.error],
    )
