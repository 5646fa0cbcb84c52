"""Product rules: create, read, list, update, archive, bulk update."""

from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from peewee import JOIN, IntegrityError
from stdnum import ean

from ..db import contains_text, is_postgres, write_transaction
from ..errors import ApiError, raises
from ..events import emit, event_params, write_events
from ..ids import new_id
from ..pagination import paginate_args
from ..shapes import Row, compile_serializer, field_names
from ..sql import PreparedQuery, executemany, insert_statement
from ..timeutil import now_ms
from ..totals import bounded, maintained
from .bundles import (
    components_payload,
    set_components,
)
from .desired_state import write_product
from .models import BundleComponent, Listing, Product
from .shapes import (
    ListingRowSchema,
    ListingSchema,
    ProductDetailSchema,
    ProductSchema,
    ProductWithComponentsSchema,
)

# Each word adds a condition over three columns: bound them (SQLite's parser stack, and cost).
MAX_SEARCH_WORDS = 10


def search_words(text: str | None) -> list[str]:
    """The distinct words of a search, in order (a repeated word adds nothing)."""
    return list(dict.fromkeys((text or "").split()))


PRODUCT_FIELDS = field_names(ProductSchema)
SORT_FIELDS = {
    "sku": Product.sku,
    "title": Product.title,
    "created_at": Product.created_at,
    "updated_at": Product.updated_at,
}
MUTABLE_FIELDS = (
    "title",
    "description",
    "status",
    "gtin",
    "category",
    "cost_price",
    "weight_kg",
    "images",
)


_product = compile_serializer(ProductSchema)
_product_components = compile_serializer(ProductWithComponentsSchema)
_product_detail = compile_serializer(ProductDetailSchema)
_listing = compile_serializer(ListingSchema)
_listing_row = compile_serializer(ListingRowSchema)
LISTING_ROW_FIELDS = field_names(ListingRowSchema)


def listing_view(row: Row, fulfilled_by_marketplace: bool) -> dict[str, Any]:
    """A listing row (model or dict) with what the API derives for it: ``fulfilled_by``
    and ``hold_reason`` (a held listing has no price: the one reason there is)."""
    data = dict(row) if isinstance(row, dict) else dict(row.__data__)
    data["fulfilled_by"] = "marketplace" if fulfilled_by_marketplace else "merchant"
    data["hold_reason"] = "price_missing" if data.get("sync_status") == "held" else None
    return data


def serialize_listing(row: Row, fulfilled_by_marketplace: bool) -> dict[str, Any]:
    """A listing as the API shows it."""
    return _listing(listing_view(row, fulfilled_by_marketplace))


def serialize_product(
    row: Row,
    listings: Iterable[Row] | None = None,
    components: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A product (model or row dict) as the API shows it; with its listings on detail, and
    its bundle components on detail and after a write."""
    if listings is not None:
        return _product_detail(row, listings=listings, components=components or [])
    if components is not None:
        return _product_components(row, components=components)
    return _product(row)


def list_listings(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The tenant's listings with their products' SKU and title, newest first, filtered by
    ``sync_status`` and ``marketplace`` (the listings that need attention: ``pending``,
    ``error``; migration 0116's index serves every status but ``in_sync``)."""
    condition = Listing.tenant == tenant_id
    scope = [tenant_id]
    for name in ("sync_status", "marketplace"):
        value = args.get(name)
        scope.append(value)
        if value:
            condition &= getattr(Listing, name) == value
    if args.get("sync_status") and args["sync_status"] != "in_sync":
        # the partial index's own condition, spelled out: SQLite uses a partial index only
        # for a query that names its WHERE term (it does not infer it from ``= 'error'``)
        condition &= Listing.sync_status != "in_sync"
    query = (
        Listing.select(
            *_LISTING_SHOWN,
            Listing.id,
            Listing.product,
            Listing.created_at,
            Listing.updated_at,
            Product.sku,
            Product.title,
        )
        .join(Product, on=(Listing.product == Product.id))
        .where(condition)
        .dicts()
    )
    rows, meta = paginate_args(
        query,
        args,
        sort_field=Listing.created_at,
        tiebreak=Listing.id,
        kind="listings",
        scope=scope,
        # counted without the join (every listing has its product), from the index alone
        total=bounded(Listing.select(Listing.id).where(condition)),
    )
    by_product: dict[str, list[str]] = {}
    for row in rows:
        by_product.setdefault(row["product"], []).append(row["marketplace"])
    fulfilled = {
        (product_id, marketplace)
        for product_id, marketplaces in by_product.items()
        for marketplace in fulfilling_marketplaces(product_id, marketplaces)
    }
    return [
        _listing_row(listing_view(row, (row["product"], row["marketplace"]) in fulfilled))
        for row in rows
    ], meta


@raises("INVALID_GTIN")
def check_gtin(gtin: Any) -> str | None:
    """8, 12, 13 or 14 digits with a valid GS1 check digit, else INVALID_GTIN."""
    if gtin is None:
        return None
    if not (
        isinstance(gtin, str) and gtin.isascii() and gtin.isdigit() and len(gtin) in (8, 12, 13, 14)
    ):
        raise ApiError(
            "INVALID_GTIN",
            "A GTIN has 8, 12, 13 or 14 digits.",
            details={"field": "gtin", "value": gtin},
        )
    if not ean.is_valid(gtin):
        raise ApiError(
            "INVALID_GTIN",
            "The GTIN check digit is wrong.",
            details={"field": "gtin", "value": gtin},
        )
    return gtin


_by_sku = PreparedQuery(
    lambda tenant, sku: Product.select().where((Product.tenant == tenant) & (Product.sku == sku)),
    2,
)
_LISTING_SHOWN = (
    Listing.marketplace,
    Listing.external_id,
    Listing.price,
    Listing.currency,
    Listing.quantity,
    Listing.stock_buffer,
    Listing.max_quantity,
    Listing.allocation_pct,
    Listing.fixed_quantity,
    Listing.warehouse_ids,
    Listing.status,
    Listing.sync_status,
    Listing.last_synced_at,
    Listing.last_sync_error,
    Listing.submission,
)
_listings_of = PreparedQuery(
    lambda product_id: (
        Listing.select(*_LISTING_SHOWN)
        .where(Listing.product == product_id)
        .order_by(Listing.marketplace)
    ),
    1,
)


# the product and its bundle components in one statement (a product that is no bundle has
# one row with NULL component columns): a product GET costs no more statements than before
# bundles existed (bench/stock_reads.py)
_with_components = PreparedQuery(
    lambda tenant, sku: (
        Product.select(
            *Product._meta.sorted_fields,
            BundleComponent.sku.alias("component_sku"),
            BundleComponent.quantity.alias("component_quantity"),
        )
        .join(BundleComponent, JOIN.LEFT_OUTER, on=(BundleComponent.bundle == Product.id))
        .where((Product.tenant == tenant) & (Product.sku == sku))
        .order_by(BundleComponent.sku)
    ),
    2,
)


@raises("PRODUCT_NOT_FOUND")
def find_product(tenant_id: str, sku: str) -> dict[str, Any]:
    """The product row as a dict, or PRODUCT_NOT_FOUND."""
    row = _by_sku.first(tenant_id, sku)
    if row is None:
        raise ApiError("PRODUCT_NOT_FOUND", details={"sku": sku})
    return row


@raises("PRODUCT_NOT_FOUND")
def get_product(tenant_id: str, sku: str) -> dict[str, Any]:
    """The product with its listings."""
    rows = _with_components.dicts(tenant_id, sku)
    if not rows:
        raise ApiError("PRODUCT_NOT_FOUND", details={"sku": sku})
    components = [
        {"sku": r["component_sku"], "quantity": r["component_quantity"]}
        for r in rows
        if r["component_sku"] is not None
    ]
    row = {k: v for k, v in rows[0].items() if k not in ("component_sku", "component_quantity")}
    listings = list(_listings_of.dicts(row["id"]))
    by_marketplace = fulfilling_marketplaces(row["id"], [r["marketplace"] for r in listings])
    return serialize_product(
        row,
        [listing_view(r, r["marketplace"] in by_marketplace) for r in listings],
        components,
    )


@raises("PRODUCT_NOT_FOUND")
def locked_product(tenant_id: str, sku: str) -> Product:
    """The product, locked for the caller's transaction (concurrent changes wait their turn).

    ``FOR NO KEY UPDATE`` on PostgreSQL: a product's key never changes, and a plain ``FOR
    UPDATE`` would also block the key-share lock that every insert referencing the product
    (a stock change's adjustment) takes, so a listing PATCH holding the product while it
    waits for a listing that such a stock change holds was a deadlock (bench/stock_soak.py).
    """
    query = Product.select().where((Product.tenant == tenant_id) & (Product.sku == sku))
    if is_postgres():
        query = query.for_update("FOR NO KEY UPDATE")
    product = query.first()
    if product is None:
        raise ApiError("PRODUCT_NOT_FOUND", details={"sku": sku})
    return product


# Orders live above products: create_app registers the orders domain's question here,
# products only asks it (dependencies between domains run one way, tests/test_architecture.py).
_OPEN_ORDER_CHECKS: list[Callable[[str, str], bool]] = []


def register_open_order_check(check: Callable[[str, str], bool]) -> None:
    """Register ``check(tenant_id, sku) -> bool``: does an open order need this SKU?
    Called by ``create_app``; registering the same check again changes nothing."""
    if check not in _OPEN_ORDER_CHECKS:
        _OPEN_ORDER_CHECKS.append(check)


def registered_checks() -> tuple[Callable, ...]:
    """The open-order and fulfilment checks registered (the worker's self-check)."""
    return (*_OPEN_ORDER_CHECKS, *_FULFILMENT_CHECKS)


class DomainNotRegistered(RuntimeError):
    """A question products asks a higher domain has no answer: that domain was not
    registered (``commerce_api.tasks.register_all``, which ``create_app`` calls)."""


def sku_has_open_orders(tenant_id: str, sku: str) -> bool:
    """True when a registered domain has an open order with ``sku`` (archive is refused).
    Fails closed: with no check registered (a process that did not go through
    ``create_app``) it raises rather than let an archive through."""
    if not _OPEN_ORDER_CHECKS:
        raise DomainNotRegistered(
            "No open-order check is registered: archiving is refused (the orders domain"
            " registers it in commerce_api.tasks.register_all, called by create_app)."
        )
    return any(check(tenant_id, sku) for check in _OPEN_ORDER_CHECKS)


# Which marketplaces fulfil a product's listings is known from stock (inventory) above
# products: create_app registers the marketplaces domain's answer, products only asks it.
_FULFILMENT_CHECKS: list[Callable[[str, list[str]], set[str]]] = []


def register_fulfilment_check(check: Callable[[str, list[str]], set[str]]) -> None:
    """Register ``check(product_id, marketplaces) -> {marketplace}``: which of them ship
    the product from their own warehouse. Registering the same check again changes nothing."""
    if check not in _FULFILMENT_CHECKS:
        _FULFILMENT_CHECKS.append(check)


def fulfilling_marketplaces(product_id: str, marketplaces: list[str]) -> set[str]:
    """The marketplaces among ``marketplaces`` that fulfil the product (FBA/FBS)."""
    if not marketplaces:
        return set()
    found: set[str] = set()
    for check in _FULFILMENT_CHECKS:
        found |= check(product_id, marketplaces)
    return found


@raises(
    "DUPLICATE_SKU",
    check_gtin,
    "PRODUCT_NOT_FOUND",
    "INVALID_BUNDLE_COMPONENT",
    "BUNDLE_STOCK_IS_DERIVED",
)
def create_product(tenant_id: str, data: dict[str, Any]) -> dict[str, Any]:
    check_gtin(data.get("gtin"))
    now = now_ms()
    fields = {name: data[name] for name in MUTABLE_FIELDS if name in data}
    fields.setdefault("status", "draft")
    fields.setdefault("images", [])
    try:
        with write_transaction():
            if (
                Product.select()
                .where((Product.tenant == tenant_id) & (Product.sku == data["sku"]))
                .exists()
            ):
                raise ApiError("DUPLICATE_SKU", details={"sku": data["sku"]})
            product = Product.create(
                id=new_id("product"),
                tenant=tenant_id,
                sku=data["sku"],
                created_at=now,
                updated_at=now,
                **fields,
            )
            if data.get("components"):
                set_components(tenant_id, product, data["components"])
            body = serialize_product(product, components=components_payload(product.id))
            emit(tenant_id, "product.created", "product", product.id, body)
    except IntegrityError:
        # two creates raced past the existence check; the unique index decided
        raise ApiError("DUPLICATE_SKU", details={"sku": data["sku"]}) from None
    return body


def create_products(tenant_id: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Create many products inside the caller's transaction: one INSERT, one batch of
    ``product.created`` events (an import's chunk). Each item as ``create_product`` takes
    it; SKUs must be new and distinct (``IntegrityError`` otherwise: the caller falls
    back to ``create_product`` one by one). Returns the products, in ``items``' order."""
    if not items:
        return []
    now = now_ms()
    fields = Product._meta.sorted_fields
    rows, ids = [], []
    for data in items:
        check_gtin(data.get("gtin"))
        values = {name: data[name] for name in MUTABLE_FIELDS if name in data}
        values.setdefault("status", "draft")
        values.setdefault("images", [])
        values.update(
            id=new_id("product"), tenant=tenant_id, sku=data["sku"], created_at=now, updated_at=now
        )
        for field in fields:  # the other columns get their defaults, as create() gives them
            if field.name not in values:
                values[field.name] = field.default() if callable(field.default) else field.default
        rows.append([field.db_value(values[field.name]) for field in fields])
        ids.append(values["id"])
    executemany(insert_statement(Product), rows)  # one statement, many rows
    created = {}
    for start in range(0, len(ids), 400):
        chunk = ids[start : start + 400]
        for row in Product.select().where(Product.id.in_(chunk)).dicts():
            created[row["id"]] = serialize_product(row)
    bodies = [created[product_id] for product_id in ids]
    write_events(
        [event_params(tenant_id, "product.created", "product", b["id"], b) for b in bodies]
    )
    return bodies


def changed_fields(product: Row, changes: dict[str, Any]) -> dict[str, Any]:
    """The ``changes`` that differ from what ``product`` (a model or row dict) holds;
    money and weights compared as numbers, not as representations."""
    stored = product if isinstance(product, dict) else product.__data__
    changed = {
        name: value
        for name, value in changes.items()
        if name in MUTABLE_FIELDS and stored.get(name) != value
    }
    for name in ("cost_price", "weight_kg"):
        old, new = stored.get(name), changed.get(name)
        if old is not None and new is not None and Decimal(str(new)) == Decimal(str(old)):
            changed.pop(name)
    return changed


def _apply_update(tenant_id, sku, changes):
    """Apply ``changes`` inside the caller's transaction; returns the serialized product."""
    product = locked_product(tenant_id, sku)
    if "gtin" in changes:
        check_gtin(changes["gtin"])
    changed = changed_fields(product, changes)
    components_changed = False
    if "components" in changes:
        components_changed = _change_components(tenant_id, product, changes["components"])
    if not changed and not components_changed:
        return serialize_product(product, components=components_payload(product.id))
    archiving = changed.get("status") == "archived" and product.status != "archived"
    if archiving and sku_has_open_orders(tenant_id, sku):
        raise ApiError("OPEN_ORDERS_EXIST", details={"sku": sku})
    changed["updated_at"] = now_ms()
    # the row, and its listings (and its bundles' on a status change) marked pending
    write_product(product, changed)
    for name, value in changed.items():
        setattr(product, name, value)
    product = Product.get_by_id(product.id)
    body = serialize_product(product, components=components_payload(product.id))
    fields = sorted(k for k in changed if k != "updated_at")
    if components_changed:
        fields = sorted([*fields, "components"])
    emit(tenant_id, "product.updated", "product", product.id, {**body, "changed_fields": fields})
    if archiving:
        emit(tenant_id, "product.archived", "product", product.id, body)
    return body


def _change_components(tenant_id, product, components):
    """Set a product's bundle components; refused while an order for the bundle is open
    (its reservations were made for the old components). Returns whether they changed."""
    if not set_components(tenant_id, product, components):
        return False
    if sku_has_open_orders(tenant_id, product.sku):
        raise ApiError(
            "OPEN_ORDERS_EXIST",
            f"{product.sku} has open orders: its components cannot change until they are "
            "shipped or cancelled.",
            details={"sku": product.sku, "field": "components"},
        )
    return True


@raises(
    locked_product,
    check_gtin,
    "OPEN_ORDERS_EXIST",
    "INVALID_BUNDLE_COMPONENT",
    "BUNDLE_STOCK_IS_DERIVED",
)
def update_product(tenant_id: str, sku: str, changes: dict[str, Any]) -> dict[str, Any]:
    with write_transaction():
        return _apply_update(tenant_id, sku, changes)


@raises(locked_product, "OPEN_ORDERS_EXIST")
def archive_product(tenant_id: str, sku: str) -> None:
    """Soft delete: the product becomes ``archived`` unless it has open orders."""
    with write_transaction():
        product = locked_product(tenant_id, sku)
        if product.status == "archived":
            return
        if sku_has_open_orders(tenant_id, sku):
            raise ApiError("OPEN_ORDERS_EXIST", details={"sku": sku})
        now = now_ms()
        # its listings inactive, its bundles' pending (they become unavailable)
        write_product(product, {"status": "archived", "updated_at": now})
        product.status, product.updated_at = "archived", now
        body = serialize_product(product, components=components_payload(product.id))
        emit(tenant_id, "product.archived", "product", product.id, body)


def bulk_update(tenant_id: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Apply each ``{index, sku, ...changes}`` atomically on its own; report per item
    (``items`` come from ``http.bulk.load_items``: loaded, or an ``error`` of their own)."""
    updated, errors = 0, []
    for item in items:
        index = item["index"]
        if "error" in item:
            errors.append({"index": index, "sku": item["sku"], **item["error"]})
            continue
        changes = {k: v for k, v in item.items() if k not in ("sku", "index")}
        try:
            with write_transaction():
                _apply_update(tenant_id, item["sku"], changes)
            updated += 1
        except ApiError as error:
            errors.append(
                {
                    "index": index,
                    "sku": item["sku"],
                    "code": error.code,
                    "message": error.message,
                    "details": error.details,
                }
            )
    return {"updated": updated, "failed": len(errors), "errors": errors}


def list_products(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    # rows as dicts: a model instance per row costs more than its serialization
    query = Product.select().where(Product.tenant == tenant_id).dicts()
    status = args.get("status")
    if status:
        query = query.where(Product.status == status)
    else:
        query = query.where(Product.status != "archived")
    if args.get("marketplace"):
        listed = Listing.select(Listing.product).where(
            (Listing.tenant == tenant_id) & (Listing.marketplace == args["marketplace"])
        )
        query = query.where(Product.id.in_(listed))
    if args.get("category"):
        query = query.where(Product.category == args["category"])
    for term in search_words(args.get("search")):
        query = query.where(
            contains_text(Product.title, term)
            | contains_text(Product.sku, term)
            | contains_text(Product.gtin, term)
        )
    sort = SORT_FIELDS[args.get("sort") or "created_at"]
    rows, meta = paginate_args(
        query,
        args,
        sort_field=sort,
        tiebreak=Product.id,
        kind="products",
        # a cursor only continues the query (tenant and filters) that issued it
        scope=[tenant_id, status, args.get("marketplace"), args.get("search")]
        + ([args["category"]] if args.get("category") else []),
        total=None
        if args.get("marketplace") or args.get("search") or args.get("category")
        else maintained(tenant_id, "products", status, exclude=("archived",)),
    )
    return [serialize_product(row) for row in rows], meta
