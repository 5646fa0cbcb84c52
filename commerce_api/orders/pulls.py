"""Collecting orders: bring new and changed orders (and marketplace stock) from a
connection.

A pull reads pages from the connector with no transaction open, applies each order in its
own transaction (an upsert by (marketplace, external_order_id), so a page seen twice
changes nothing), and moves the connection's cursor on after each page. A crash between
the two only means the page is read again.
"""

import logging
from collections.abc import Callable
from typing import Any

from ..db import write_transaction
from ..errors import ApiError
from ..inventory.models import Warehouse
from ..inventory.reservations import set_marketplace_stock
from ..jobs.models import Job
from ..jobs.services import enqueue_job
from ..marketplaces import gateway
from ..marketplaces.answers import invalid_answer
from ..marketplaces.base import MarketplaceRejection, MarketplaceUnavailable
from ..marketplaces.models import MarketplaceConnection
from ..marketplaces.services import record_attempt
from ..products.models import Product
from ..timeutil import now_ms
from .ingest import upsert_order, validate_incoming

log = logging.getLogger("commerce_api.orders")

MAX_PAGES_PER_PULL = 20
MAX_ERRORS_KEPT = 20


def _save_cursor(connection_id, cursor):
    with write_transaction():
        MarketplaceConnection.update(pull_cursor=cursor, updated_at=now_ms()).where(
            MarketplaceConnection.id == connection_id
        ).execute()


def _finish(connection_id, status, error):
    with write_transaction():
        MarketplaceConnection.update(
            last_pull_at=now_ms(),
            last_pull_status=status,
            last_pull_error=(error or None) and str(error)[:2000],
        ).where(MarketplaceConnection.id == connection_id).execute()


def check_page_orders(connection: MarketplaceConnection, orders: list[Any]) -> None:
    """Every order of a page against the import shape (the rules of ``orders import``).

    One order that breaks them (NaN, 1e20, a 50-character currency, an object where a
    number belongs, a negative or huge quantity) makes the whole answer unusable: the
    marketplace counts as unavailable, nothing of the page is applied and the cursor stays.
    """
    for index, raw in enumerate(orders):
        try:
            validate_incoming({"marketplace": connection.marketplace, **raw})
        except ApiError as error:
            fields = error.details.get("fields", error.details)
            external_id = raw.get("external_order_id")
            label = external_id if isinstance(external_id, str) else f"#{index}"
            raise invalid_answer("fetch_orders", f"order {label[:200]}:", fields, index) from None


def pull_connection(
    connection: MarketplaceConnection,
    *,
    inventory: bool = True,
    heartbeat: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Pull one connection now; returns a summary of what changed."""
    summary = {
        "connection_id": connection.id,
        "marketplace": connection.marketplace,
        "created": 0,
        "updated": 0,
        "unchanged": 0,
        "failed": 0,
        "errors": [],
        "inventory_updated": 0,
        "status": "ok",
    }
    cursor = connection.pull_cursor
    created_by = f"marketplace:{connection.marketplace}"
    try:
        for _ in range(MAX_PAGES_PER_PULL):
            if heartbeat is not None:
                heartbeat()
            page = gateway.call(
                connection, "fetch_orders", lambda connector, at=cursor: connector.fetch_orders(at)
            ).result
            check_page_orders(connection, page.orders)  # the whole page, before any of it
            _apply_page(connection, page, summary, created_by)
            if page.cursor != cursor:
                cursor = page.cursor
                _save_cursor(connection.id, cursor)
            if not page.has_more:
                break
        if inventory:
            summary["inventory_updated"] = sync_marketplace_stock(connection)
    except (MarketplaceUnavailable, MarketplaceRejection) as exc:
        summary["status"] = "unavailable" if isinstance(exc, MarketplaceUnavailable) else "error"
        summary["error"] = {"code": exc.code, "message": exc.message}
    status = summary["status"]
    if status == "ok" and summary["failed"]:
        status = "partial"
        summary["status"] = status
    error = summary.get("error", {}).get("message")
    if status == "partial":
        error = f"{summary['failed']} order(s) could not be applied: " + "; ".join(
            f"{e['external_order_id']}: {e['code']}" for e in summary["errors"][:5]
        )
    _finish(connection.id, status, error)
    return summary


def _apply_page(connection, page, summary, created_by):
    """Upsert one page's orders, counting each in ``summary`` (a malformed one as failed)."""
    for problem in page.errors:  # orders the connector could not map: not dropped
        summary["failed"] += 1
        if len(summary["errors"]) < MAX_ERRORS_KEPT and isinstance(problem, dict):
            summary["errors"].append(
                {
                    "external_order_id": problem.get("external_order_id"),
                    "code": problem.get("code"),
                    "message": problem.get("message"),
                    "details": {},
                }
            )
    for raw in page.orders:
        try:
            outcome, order_id = upsert_order(
                connection.tenant_id,
                raw,
                source="pull",
                connection=connection,
                created_by=created_by,
            )
            summary[outcome] += 1
            if outcome == "created":
                note_unknown_skus(connection, raw, order_id, created_by)
        except ApiError as error:
            # a malformed order must not stop the others (nor block the cursor)
            summary["failed"] += 1
            if len(summary["errors"]) < MAX_ERRORS_KEPT:
                summary["errors"].append(
                    {
                        "external_order_id": raw.get("external_order_id")
                        if isinstance(raw, dict)
                        else None,
                        "code": error.code,
                        "message": error.message,
                        "details": error.details,
                    }
                )


def note_unknown_skus(
    connection: MarketplaceConnection, raw: dict[str, Any], order_id: str, created_by: str
) -> None:
    """An order naming SKUs the tenant does not have is imported (no stock is held for
    them) and said in the sync history (``order_import``, ``UNKNOWN_SKU``): never silent."""
    skus = {line.get("sku") for line in raw.get("line_items") or [] if isinstance(line, dict)}
    skus.discard(None)
    if not skus:
        return
    known = {
        row[0]
        for row in Product.select(Product.sku)
        .where((Product.tenant == connection.tenant_id) & Product.sku.in_(sorted(skus)))
        .tuples()
    }
    unknown = sorted(skus - known)
    if unknown:
        record_attempt(
            connection,
            resource_type="order",
            resource_id=order_id,
            operation="order_import",
            direction="inbound",
            status="rejected",
            error_code="UNKNOWN_SKU",
            error_message=f"The order names SKUs this tenant does not have: {', '.join(unknown)}"[
                :2000
            ],
            details={"external_order_id": raw.get("external_order_id"), "skus": unknown[:50]},
            created_by=created_by,
        )


def sync_marketplace_stock(connection: MarketplaceConnection) -> int:
    """Write the stock a marketplace holds (FBA/FBS) into its warehouses.

    Only warehouses the operator created for this marketplace are filled (``warehouses
    create --type FBA --marketplace M``); stock of unknown SKUs is skipped.
    """
    warehouses = {
        w.type: w
        for w in Warehouse.select()
        .where(
            (Warehouse.tenant == connection.tenant_id)
            & (Warehouse.marketplace == connection.marketplace)
            & (Warehouse.type.in_(("FBA", "FBS")))
            & (Warehouse.is_active == True)  # noqa: E712 (SQL)
        )
        .order_by(Warehouse.created_at.desc())
    }
    if not warehouses:
        return 0
    updated = 0
    items = gateway.call(
        connection, "fetch_inventory", lambda connector: connector.fetch_inventory()
    ).result
    for item in items:
        warehouse = warehouses.get(item.get("warehouse_type") or "FBA")
        sku, on_hand = item.get("sku"), item.get("on_hand")
        if warehouse is None or not isinstance(sku, str):
            continue
        try:
            if set_marketplace_stock(
                connection.tenant_id,
                warehouse.id,
                sku,
                on_hand,
                created_by=f"marketplace:{connection.marketplace}",
            ):
                updated += 1
        except ApiError as error:
            log.info("stock of %s on %s skipped: %s", sku, connection.marketplace, error.code)
    return updated


def enqueue_pull(connection: MarketplaceConnection, created_by: str) -> Job | None:
    """An ``order_pull`` job for ``connection`` now, unless one is queued or running."""
    for (params,) in (
        Job.select(Job.params)
        .where(
            (Job.tenant_id == connection.tenant_id)
            & (Job.type == "order_pull")
            & Job.status.in_(("queued", "running"))
        )
        .tuples()
    ):
        if isinstance(params, dict) and params.get("connection_id") == connection.id:
            return None
    return enqueue_job(
        connection.tenant_id,
        "order_pull",
        {"connection_id": connection.id},
        created_by=created_by,
        internal=True,
    )


def enqueue_pulls() -> list[dict[str, str]]:
    """The periodic task: one internal ``order_pull`` job per active connection.

    Each connection is pulled by a job of its own, so a slow marketplace holds one runner
    for at most its job's time-out and never the pulls of other connections or tenants. A
    connection whose pull is still queued or running gets no second one. Returns the jobs
    queued, as ``[{connection_id, job_id}]``.
    """
    pending = set()
    for (params,) in (
        Job.select(Job.params)
        .where((Job.type == "order_pull") & Job.status.in_(("queued", "running")))
        .tuples()
    ):
        if isinstance(params, dict):
            pending.add(params.get("connection_id"))
    queued = []
    # read to the end before the first insert: on SQLite a statement still stepping keeps
    # its read snapshot open, and the insert's upgrade to a writer fails at once with
    # "database is locked" (no busy wait) when another process wrote meanwhile
    connections = list(
        MarketplaceConnection.select(MarketplaceConnection.id, MarketplaceConnection.tenant)
        .where(MarketplaceConnection.status == "active")
        .order_by(MarketplaceConnection.created_at)
    )
    for connection in connections:
        if connection.id in pending:
            continue
        job = enqueue_job(
            connection.tenant_id,
            "order_pull",
            {"connection_id": connection.id},
            created_by="periodic:pull_orders",
            internal=True,
        )
        queued.append({"connection_id": connection.id, "job_id": job.id})
    return queued


def pull_one(
    tenant_id: str, connection_id: str, heartbeat: Callable[[], None] | None = None
) -> dict[str, Any] | None:
    """The ``order_pull`` job: pull one connection if it is still active; None if not."""
    connection = MarketplaceConnection.get_or_none(
        (MarketplaceConnection.id == connection_id)
        & (MarketplaceConnection.tenant == tenant_id)
        & (MarketplaceConnection.status == "active")
    )
    if connection is None:
        return None
    try:
        return pull_connection(connection, heartbeat=heartbeat)
    except Exception:
        log.exception("order pull of %s failed", connection.id)
        _finish(connection.id, "error", "Internal error during the pull; see the logs.")
        raise
