"""The one writer of stock quantities: lock the rows, change them in memory, write once.

Every change of ``on_hand`` or ``reserved`` goes through ``StockLedger.change``, which
records exactly one adjustment for it; ``flush`` then writes the rows, the adjustments,
the inventory records' totals and status, and the outbox events, all in the caller's
transaction. Rows are read under lock (``SELECT ... FOR UPDATE`` on PostgreSQL; on
SQLite the caller's ``write_transaction()`` already holds the write lock), so two
concurrent changes of one row are serialized and both counted.

Lock order, the same for every caller so that transactions do not deadlock: warehouses
(shared), then inventory records (by product id), then stock rows (by id).
"""

from collections.abc import Iterable
from typing import Any

from ..db import db, for_update, is_postgres
from ..errors import ApiError
from ..events import emit
from ..ids import new_id
from ..products import desired_state
from ..shapes import compile_serializer
from ..sql import executemany, insert_statement, update_statement
from ..timeutil import now_ms
from .models import Adjustment, InventorySummary, Stock, Warehouse
from .shapes import AdjustmentSchema

_CHUNK = 400  # ids per IN (...) list: far below every engine's parameter limit


def compute_status(available: int, safety_stock: int) -> str:
    """``out_of_stock`` at 0 or less, ``critical`` at half the safety stock or less,
    ``low`` at the safety stock or less, else ``normal``."""
    if available <= 0:
        return "out_of_stock"
    if available * 2 <= safety_stock:
        return "critical"
    if available <= safety_stock:
        return "low"
    return "normal"


# An adjustment (model or dict of column values) as the API shows it.
serialize_adjustment = compile_serializer(AdjustmentSchema)


def _chunks(items, size=_CHUNK):
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def lock_warehouses(tenant_id: str, warehouse_ids: Iterable[str]) -> dict[str, Warehouse]:
    """The tenant's warehouses among ``warehouse_ids`` (id -> Warehouse), share-locked.

    The shared lock (PostgreSQL) keeps a warehouse from being deactivated or changed while
    this transaction puts stock in it; SQLite's write lock does the same.
    """
    found = {}
    for chunk in _chunks(set(warehouse_ids)):
        query = Warehouse.select().where((Warehouse.tenant == tenant_id) & Warehouse.id.in_(chunk))
        if is_postgres():
            query = query.order_by(Warehouse.id).for_update("FOR SHARE")
        for warehouse in query:
            found[warehouse.id] = warehouse
    return found


class StockRow:
    __slots__ = (
        "id",
        "product_id",
        "sku",
        "warehouse_id",
        "on_hand",
        "reserved",
        "version",
        "last_adjusted_at",
        "dirty",
    )

    def __init__(self, row):
        (
            self.id,
            self.product_id,
            self.sku,
            self.warehouse_id,
            self.on_hand,
            self.reserved,
            self.version,
            self.last_adjusted_at,
        ) = row
        self.dirty = False

    @property
    def available(self) -> int:
        return self.on_hand - self.reserved


class SummaryRow:
    __slots__ = (
        "product_id",
        "sku",
        "total_on_hand",
        "total_reserved",
        "safety_stock",
        "status",
        "previous_status",
        "dirty",
    )

    def __init__(self, row):
        (
            self.product_id,
            self.sku,
            self.total_on_hand,
            self.total_reserved,
            self.safety_stock,
            self.status,
        ) = row
        self.previous_status = self.status
        self.dirty = False

    @property
    def total_available(self) -> int:
        return self.total_on_hand - self.total_reserved


_STOCK_COLUMNS = (
    Stock.id,
    Stock.product,
    Stock.sku,
    Stock.warehouse,
    Stock.on_hand,
    Stock.reserved,
    Stock.version,
    Stock.last_adjusted_at,
)
_SUMMARY_COLUMNS = (
    InventorySummary.product,
    InventorySummary.sku,
    InventorySummary.total_on_hand,
    InventorySummary.total_reserved,
    InventorySummary.safety_stock,
    InventorySummary.status,
)


class StockLedger:
    """Locked inventory records and stock rows of one tenant, and the pending changes."""

    def __init__(self, tenant_id, created_by):
        self.tenant_id = tenant_id
        self.created_by = created_by
        self.summaries = {}  # product id -> SummaryRow
        self.stocks = {}  # (product id, warehouse id) -> StockRow
        self.adjustments = []  # column dicts, in the order the changes happened
        if db.transaction_depth() == 0:
            raise RuntimeError("StockLedger must be used inside a write_transaction()")

    # -- locking ---------------------------------------------------------------------

    def lock(
        self,
        products: dict[str, str],
        warehouse_ids: Iterable[str] | None = None,
        create: Iterable[tuple[str, str]] = (),
    ) -> "StockLedger":
        """Lock the records of ``products`` ({product id: sku}) and their stock rows.

        Only rows in ``warehouse_ids`` are loaded when it is given. ``create`` names
        (product id, warehouse id) pairs whose record and stock row are created (empty)
        when missing; the first adjustment then records their first quantity.
        """
        create = set(create)
        product_ids = sorted(set(products) - set(self.summaries))
        self._load_summaries(product_ids)
        missing = sorted({p for p, _ in create if p not in self.summaries})
        if missing:
            now = now_ms()
            rows = [
                {
                    "product": product_id,
                    "tenant": self.tenant_id,
                    "sku": products[product_id],
                    "status": compute_status(0, 0),
                    "created_at": now,
                    "updated_at": now,
                }
                for product_id in missing
            ]
            for chunk in _chunks(rows):
                InventorySummary.insert_many(chunk).on_conflict_ignore().execute()
            self._load_summaries(missing)
        self._load_stocks(product_ids, warehouse_ids)
        absent = sorted(pair for pair in create if pair not in self.stocks)
        if absent:
            now = now_ms()
            rows = [
                {
                    "id": new_id("stock"),
                    "tenant": self.tenant_id,
                    "product": product_id,
                    "sku": products[product_id],
                    "warehouse": warehouse_id,
                    "created_at": now,
                    "updated_at": now,
                }
                for product_id, warehouse_id in absent
            ]
            for chunk in _chunks(rows):
                Stock.insert_many(chunk).on_conflict_ignore().execute()
            self._load_stocks(
                sorted({p for p, _ in absent}), sorted({w for _, w in absent}), only=set(absent)
            )
        return self

    def _load_summaries(self, product_ids):
        for chunk in _chunks(product_ids):
            query = (
                InventorySummary.select(*_SUMMARY_COLUMNS)
                .where(
                    (InventorySummary.tenant == self.tenant_id)
                    & InventorySummary.product.in_(chunk)
                )
                .order_by(InventorySummary.product)
            )
            for row in for_update(query).tuples():
                self.summaries[row[0]] = SummaryRow(row)

    def _load_stocks(self, product_ids, warehouse_ids=None, only=None):
        if warehouse_ids is not None and not warehouse_ids:
            return
        for chunk in _chunks(product_ids):
            condition = (Stock.tenant == self.tenant_id) & Stock.product.in_(chunk)
            if warehouse_ids is not None:
                condition &= Stock.warehouse.in_(list(warehouse_ids))
            query = Stock.select(*_STOCK_COLUMNS).where(condition).order_by(Stock.id)
            for row in for_update(query).tuples():
                key = (row[1], row[3])
                if key in self.stocks or (only is not None and key not in only):
                    continue
                self.stocks[key] = StockRow(row)

    def rows_of(self, product_id: str) -> list[StockRow]:
        """The locked stock rows of a product."""
        return [row for (pid, _), row in self.stocks.items() if pid == product_id]

    # -- changes ---------------------------------------------------------------------

    def change(
        self,
        row: StockRow,
        quantity_type: str,
        value: int,
        reason: str,
        note: str | None = None,
        reference: str | None = None,
    ) -> dict[str, Any]:
        """Set one quantity of a locked row and record the adjustment; returns it."""
        on_hand = value if quantity_type == "on_hand" else row.on_hand
        reserved = value if quantity_type == "reserved" else row.reserved
        if reserved < 0 or on_hand < reserved:
            raise ApiError(
                "NEGATIVE_QUANTITY",
                "On hand would fall below zero or below the reserved quantity.",
                details={
                    "sku": row.sku,
                    "warehouse_id": row.warehouse_id,
                    "on_hand": on_hand,
                    "reserved": reserved,
                },
            )
        before = row.on_hand if quantity_type == "on_hand" else row.reserved
        delta = value - before
        created_at = max(now_ms(), row.last_adjusted_at + 1)  # time order is ledger order
        row.version += 1
        row.last_adjusted_at = created_at
        row.on_hand, row.reserved = on_hand, reserved
        row.dirty = True
        summary = self.summaries[row.product_id]
        if quantity_type == "on_hand":
            summary.total_on_hand += delta
        else:
            summary.total_reserved += delta
        summary.dirty = True
        adjustment = {
            "id": new_id("adjustment"),
            "tenant": self.tenant_id,
            "product": row.product_id,
            "sku": row.sku,
            "warehouse": row.warehouse_id,
            "stock": row.id,
            "sequence": row.version,
            "quantity_type": quantity_type,
            "before_quantity": before,
            "after_quantity": value,
            "delta": delta,
            "reason": reason,
            "note": note,
            "reference": reference,
            "created_by": self.created_by,
            "created_at": created_at,
        }
        self.adjustments.append(adjustment)
        return adjustment

    def set_safety_stock(self, summary: SummaryRow, value: int) -> None:
        summary.safety_stock = value
        summary.dirty = True

    # -- writing ---------------------------------------------------------------------

    def flush(self) -> list[dict[str, Any]]:
        """Write the changed rows, the adjustments, the records, the events, and mark the
        listings of the changed SKUs and of the bundles using them pending (their quantity
        follows the stock)."""
        now = now_ms()
        rows = [row for row in self.stocks.values() if row.dirty]
        self._write_stock(rows, now)
        if self.adjustments:
            fields = [Adjustment._meta.fields[name] for name in self.adjustments[0]]
            executemany(
                insert_statement(Adjustment, tuple(f.name for f in fields)),
                [tuple(a[f.name] for f in fields) for a in self.adjustments],
            )
        summaries = [s for s in self.summaries.values() if s.dirty]
        changes = self._write_summaries(summaries, now)
        self._emit_events(changes)
        for row in rows:
            row.dirty = False
        for summary in summaries:
            summary.dirty = False
        written = self.adjustments
        self.adjustments = []
        return written

    def _write_stock(self, rows, now):
        """The changed stock rows, and their listings (and their bundles') marked pending."""
        if not rows:
            return
        executemany(
            update_statement(
                Stock,
                ("on_hand", "reserved", "version", "last_adjusted_at", "updated_at"),
                "id",
            ),
            [(r.on_hand, r.reserved, r.version, r.last_adjusted_at, now, r.id) for r in rows],
        )
        # bundles follow their components' stock (DESIGN 14): theirs are marked too
        desired_state.stock_written((r.product_id for r in rows), now)

    def _write_summaries(self, summaries, now):
        """The changed summaries with their status recomputed; those whose status changed."""
        changes = []
        for summary in summaries:
            summary.status = compute_status(summary.total_available, summary.safety_stock)
            if summary.status != summary.previous_status:
                changes.append(summary)
        if summaries:
            executemany(
                update_statement(
                    InventorySummary,
                    (
                        "total_on_hand",
                        "total_reserved",
                        "total_available",
                        "safety_stock",
                        "status",
                        "updated_at",
                    ),
                    "product",
                ),
                [
                    (
                        s.total_on_hand,
                        s.total_reserved,
                        s.total_available,
                        s.safety_stock,
                        s.status,
                        now,
                        s.product_id,
                    )
                    for s in summaries
                ],
            )
        return changes

    def _emit_events(self, changes):
        """``inventory.adjusted`` per adjustment, ``inventory.status_changed`` per change."""
        for adjustment in self.adjustments:
            emit(
                self.tenant_id,
                "inventory.adjusted",
                "inventory",
                adjustment["sku"],
                serialize_adjustment(adjustment),
            )
        for summary in changes:
            emit(
                self.tenant_id,
                "inventory.status_changed",
                "inventory",
                summary.sku,
                {
                    "sku": summary.sku,
                    "previous_status": summary.previous_status,
                    "status": summary.status,
                    "total_on_hand": summary.total_on_hand,
                    "total_reserved": summary.total_reserved,
                    "total_available": summary.total_available,
                    "safety_stock": summary.safety_stock,
                },
            )
            summary.previous_status = summary.status
