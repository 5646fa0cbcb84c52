"""Transfer rules: create, ship, receive, cancel; each step one transaction.

Every step locks the transfer row first (``SELECT ... FOR UPDATE`` on PostgreSQL, the
``BEGIN IMMEDIATE`` write lock on SQLite) and reads its status under that lock, so two
steps on one transfer are serialized: a ship and a cancel racing end in one order or the
other, and two receipts never receive more than was shipped. Then, in the inventory's lock
order, warehouses (shared) and the stock rows through ``inventory.ledger.StockLedger``,
which writes one adjustment per quantity changed (``transfer_out`` at the source,
``transfer_in`` at the destination, or back at the source when a shipment is cancelled,
each with the transfer id as ``reference``) and marks the SKUs' listings pending in the
same transaction. What is in transit is kept on the destination's stock row
(``incoming``), so at every step the sum over warehouses of on_hand + incoming is unchanged.
"""

from collections.abc import Iterable
from typing import Any

from ..db import db, for_update, write_transaction
from ..errors import ApiError, raises, validation_error
from ..events import emit
from ..ids import new_id
from ..inventory.adjustments import check_warehouse_filter
from ..inventory.ledger import StockLedger, StockRow, lock_warehouses
from ..inventory.models import Stock, Warehouse
from ..inventory.services import run_with_retry
from ..pagination import paginate_args
from ..products.bundles import bundle_ids
from ..products.models import Product
from ..shapes import compile_serializer, field_names
from ..sql import executemany, update_statement
from ..timeutil import now_ms
from .models import Transfer, TransferLine
from .shapes import TransferLineSchema, TransferSchema

TRANSFER_FIELDS = field_names(TransferSchema)

_transfer = compile_serializer(TransferSchema)
_line = compile_serializer(TransferLineSchema)


# -- reading -----------------------------------------------------------------------------


def serialize_transfer(transfer: Transfer, lines: Iterable[TransferLine]) -> dict[str, Any]:
    """A transfer as the API shows it, with its lines in request order."""
    in_transit = transfer.status == "in_transit"
    shown = [
        _line(line, in_transit_quantity=line.outstanding if in_transit else 0)
        for line in sorted(lines, key=lambda line: line.position)
    ]
    return _transfer(transfer, lines=shown)


def _lines_of(transfer_ids: list[str]) -> dict[str, list[TransferLine]]:
    lines: dict[str, list[TransferLine]] = {tid: [] for tid in transfer_ids}
    if transfer_ids:
        query = (
            TransferLine.select()
            .where(TransferLine.transfer.in_(transfer_ids))
            .order_by(TransferLine.transfer, TransferLine.position)
        )
        for line in query:
            lines[line.transfer_id].append(line)
    return lines


def _not_found(transfer_id: str) -> ApiError:
    return ApiError("TRANSFER_NOT_FOUND", details={"transfer_id": transfer_id})


@raises("TRANSFER_NOT_FOUND")
def get_transfer(tenant_id: str, transfer_id: str) -> dict[str, Any]:
    transfer = Transfer.get_or_none((Transfer.tenant == tenant_id) & (Transfer.id == transfer_id))
    if transfer is None:
        raise _not_found(transfer_id)
    return serialize_transfer(transfer, _lines_of([transfer.id])[transfer.id])


@raises("INVALID_CURSOR", "WAREHOUSE_NOT_FOUND")
def list_transfers(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The tenant's transfers, newest first by default; filters: status, from/to
    warehouse (404 for one that is not the tenant's), SKU (transfers with a line of it)."""
    query = Transfer.select().where(Transfer.tenant == tenant_id)
    if args.get("status"):
        query = query.where(Transfer.status == args["status"])
    for name, column in (
        ("from_warehouse_id", Transfer.from_warehouse),
        ("to_warehouse_id", Transfer.to_warehouse),
    ):
        if args.get(name):
            check_warehouse_filter(tenant_id, args[name])
            query = query.where(column == args[name])
    if args.get("sku"):
        with_sku = TransferLine.select(TransferLine.transfer).where(
            (TransferLine.tenant == tenant_id) & (TransferLine.sku == args["sku"])
        )
        query = query.where(Transfer.id.in_(with_sku))
    scope = [
        tenant_id,
        *(args.get(n) for n in ("status", "from_warehouse_id", "to_warehouse_id", "sku")),
    ]
    rows, meta = paginate_args(
        query,
        args,
        sort_field=Transfer.created_at,
        tiebreak=Transfer.id,
        kind="transfers",
        scope=scope,
    )
    lines = _lines_of([row.id for row in rows])
    return [serialize_transfer(row, lines[row.id]) for row in rows], meta


# -- checks ------------------------------------------------------------------------------


def _check_warehouses(
    warehouses: dict[str, Warehouse], from_id: str, to_id: str
) -> tuple[Warehouse, Warehouse]:
    """Both warehouses exist, are the tenant's own (not marketplace-operated) and active."""
    for warehouse_id in (from_id, to_id):
        if warehouse_id not in warehouses:
            raise ApiError("WAREHOUSE_NOT_FOUND", details={"warehouse_id": warehouse_id})
    for warehouse_id in (from_id, to_id):
        warehouse = warehouses[warehouse_id]
        if warehouse.is_readonly:
            raise ApiError(
                "READONLY_WAREHOUSE",
                f"{warehouse.type} stock is managed by its marketplace: it cannot be "
                "transferred from or to.",
                details={"warehouse_id": warehouse.id, "type": warehouse.type},
            )
        if not warehouse.is_active:
            raise ApiError("WAREHOUSE_INACTIVE", details={"warehouse_id": warehouse.id})
    return warehouses[from_id], warehouses[to_id]


def _refuse_bundles(products: dict[str, str]) -> None:
    """A bundle holds no stock of its own (DESIGN 14): a line of one is refused
    (``BUNDLE_STOCK_IS_DERIVED``, 409), at creation and again at shipping (a product with
    no stock may have become a bundle since the draft was made). ``products``: {sku: id}."""
    bundles = bundle_ids(products.values())
    for sku in sorted(products):
        if products[sku] in bundles:
            raise ApiError(
                "BUNDLE_STOCK_IS_DERIVED",
                f"{sku} is a bundle: it holds no stock to transfer; transfer its components.",
                details={"sku": sku, "field": "lines"},
            )


def _status_error(transfer: Transfer, action: str, allowed: tuple[str, ...]) -> ApiError:
    return ApiError(
        "INVALID_TRANSFER_STATUS",
        f"A {transfer.status} transfer cannot be {action}; only "
        + " or ".join(allowed)
        + " transfers can.",
        details={"transfer_id": transfer.id, "status": transfer.status, "action": action},
    )


def _locked_transfer(tenant_id: str, transfer_id: str) -> Transfer:
    """The transfer, locked for the step's transaction (the first lock it takes)."""
    query = Transfer.select().where((Transfer.tenant == tenant_id) & (Transfer.id == transfer_id))
    transfer = for_update(query).first()
    if transfer is None:
        raise _not_found(transfer_id)
    return transfer


def _lock_stock(
    tenant_id: str,
    created_by: str,
    lines: list[TransferLine],
    warehouse_ids: list[str],
    create_in: str,
) -> StockLedger:
    """A ledger holding the lines' records and their stock rows in ``warehouse_ids``; the
    rows in ``create_in`` are created (empty) when missing."""
    ledger = StockLedger(tenant_id, created_by)
    ledger.lock(
        {line.product_id: line.sku for line in lines},
        warehouse_ids=sorted(set(warehouse_ids)),
        create={(line.product_id, create_in) for line in lines},
    )
    return ledger


def _change_incoming(rows: list[tuple[StockRow, int]]) -> None:
    """Add each delta to its (locked) stock row's ``incoming``."""
    if rows:
        sql = (
            f'UPDATE "{Stock._meta.table_name}" SET "incoming" = "incoming" + {db.param}'
            f' WHERE "id" = {db.param}'
        )
        executemany(sql, [(delta, row.id) for row, delta in rows])


def _save_lines(lines: list[TransferLine]) -> None:
    executemany(
        update_statement(TransferLine, ("received_quantity", "returned_quantity"), "id"),
        [(line.received_quantity, line.returned_quantity, line.id) for line in lines],
    )


def _save_status(transfer: Transfer, status: str, stamp: str | None, now: int) -> None:
    changes: dict[str, Any] = {"status": status, "updated_at": now}
    if stamp:
        changes[stamp] = now
    Transfer.update(**changes).where(Transfer.id == transfer.id).execute()
    for name, value in changes.items():
        setattr(transfer, name, value)


def _emit(tenant_id: str, event_type: str, data: dict[str, Any]) -> None:
    emit(tenant_id, event_type, "transfer", data["id"], data)


# -- steps -------------------------------------------------------------------------------


@raises(
    "SAME_WAREHOUSE_TRANSFER",
    "PRODUCT_NOT_FOUND",
    "BUNDLE_STOCK_IS_DERIVED",
    "WAREHOUSE_NOT_FOUND",
    "READONLY_WAREHOUSE",
    "WAREHOUSE_INACTIVE",
)
def create_transfer(tenant_id: str, data: dict[str, Any], created_by: str) -> dict[str, Any]:
    """A draft transfer; nothing moves until it is shipped."""
    from_id, to_id = data["from_warehouse_id"], data["to_warehouse_id"]
    if from_id == to_id:
        raise ApiError(
            "SAME_WAREHOUSE_TRANSFER",
            details={"from_warehouse_id": from_id, "to_warehouse_id": to_id},
        )
    skus = [line["sku"] for line in data["lines"]]
    if len(set(skus)) != len(skus):  # the schema refuses these; a caller of its own may not
        raise validation_error({"lines": ["Each SKU may appear on one line only."]})

    def apply() -> dict[str, Any]:
        with write_transaction():
            _check_warehouses(lock_warehouses(tenant_id, (from_id, to_id)), from_id, to_id)
            products = dict(
                Product.select(Product.sku, Product.id)
                .where((Product.tenant == tenant_id) & Product.sku.in_(skus))
                .tuples()
            )
            for sku in skus:
                if sku not in products:
                    raise ApiError("PRODUCT_NOT_FOUND", details={"sku": sku})
            _refuse_bundles(products)
            now = now_ms()
            transfer = Transfer.create(
                id=new_id("transfer"),
                tenant=tenant_id,
                from_warehouse=from_id,
                to_warehouse=to_id,
                status="draft",
                reference=data.get("reference"),
                created_by=created_by,
                created_at=now,
                updated_at=now,
            )
            lines = [
                TransferLine(
                    id=new_id("transfer_line"),
                    transfer=transfer.id,
                    tenant=tenant_id,
                    product=products[line["sku"]],
                    sku=line["sku"],
                    position=position,
                    quantity=line["quantity"],
                    received_quantity=0,
                    returned_quantity=0,
                )
                for position, line in enumerate(data["lines"])
            ]
            TransferLine.bulk_create(lines, batch_size=100)
            shown = serialize_transfer(transfer, lines)
            _emit(tenant_id, "transfer.created", shown)
            return shown

    result: dict[str, Any] = run_with_retry(apply)
    return result


@raises(
    "TRANSFER_NOT_FOUND",
    "INVALID_TRANSFER_STATUS",
    "NEGATIVE_QUANTITY",
    "BUNDLE_STOCK_IS_DERIVED",
    "WAREHOUSE_NOT_FOUND",
    "READONLY_WAREHOUSE",
    "WAREHOUSE_INACTIVE",
)
def ship_transfer(tenant_id: str, transfer_id: str, created_by: str) -> dict[str, Any]:
    """``draft -> in_transit``: every line leaves the source (``transfer_out``) and is in
    transit into the destination (its ``incoming``). A line whose SKU has less available at
    the source than it moves refuses the whole shipment (``NEGATIVE_QUANTITY``)."""

    def apply() -> dict[str, Any]:
        with write_transaction():
            transfer = _locked_transfer(tenant_id, transfer_id)
            if transfer.status != "draft":
                raise _status_error(transfer, "shipped", ("draft",))
            from_id, to_id = transfer.from_warehouse_id, transfer.to_warehouse_id
            _check_warehouses(lock_warehouses(tenant_id, (from_id, to_id)), from_id, to_id)
            lines = _lines_of([transfer.id])[transfer.id]
            _refuse_bundles({line.sku: line.product_id for line in lines})
            ledger = _lock_stock(tenant_id, created_by, lines, [from_id, to_id], create_in=to_id)
            short = []
            for line in lines:
                source = ledger.stocks.get((line.product_id, from_id))
                available = source.available if source is not None else 0
                if available < line.quantity:
                    short.append(
                        {"sku": line.sku, "quantity": line.quantity, "available": available}
                    )
            if short:
                listed = ", ".join(
                    f"{s['sku']} ({s['quantity']} to ship, {s['available']} available)"
                    for s in short
                )
                raise ApiError(
                    "NEGATIVE_QUANTITY",
                    f"Not enough available stock at the source warehouse: {listed}.",
                    details={"transfer_id": transfer.id, "warehouse_id": from_id, "lines": short},
                )
            incoming = []
            for line in lines:
                source = ledger.stocks[(line.product_id, from_id)]
                ledger.change(
                    source,
                    "on_hand",
                    source.on_hand - line.quantity,
                    "transfer_out",
                    note=f"Shipped to warehouse {to_id}",
                    reference=transfer.id,
                )
                incoming.append((ledger.stocks[(line.product_id, to_id)], line.quantity))
            ledger.flush()
            _change_incoming(incoming)
            _save_status(transfer, "in_transit", "shipped_at", now_ms())
            shown = serialize_transfer(transfer, lines)
            _emit(tenant_id, "transfer.shipped", shown)
            return shown

    result: dict[str, Any] = run_with_retry(apply)
    return result


def _receipt_amounts(transfer, lines, receipt):
    """SKU -> quantity to receive: every line's outstanding units, or the receipt's
    (checked against what is in transit)."""
    if receipt is None:
        return {line.sku: line.outstanding for line in lines if line.outstanding}
    by_sku = {line.sku: line for line in lines}
    amounts = {}
    for item in receipt:
        line = by_sku.get(item["sku"])
        if line is None:
            raise ApiError(
                "TRANSFER_LINE_NOT_FOUND",
                f"The transfer has no line for {item['sku']}.",
                details={"transfer_id": transfer.id, "sku": item["sku"]},
            )
        if item["quantity"] > line.outstanding:
            raise ApiError(
                "RECEIPT_EXCEEDS_SHIPPED",
                f"{item['quantity']} of {item['sku']} cannot be received: "
                f"{line.outstanding} are in transit.",
                details={
                    "transfer_id": transfer.id,
                    "sku": item["sku"],
                    "quantity": item["quantity"],
                    "in_transit": line.outstanding,
                },
            )
        amounts[item["sku"]] = item["quantity"]
    return amounts


def _receive_lines(tenant_id, created_by, transfer, lines, amounts):
    """Move ``amounts`` from in transit to the destination's stock (``transfer_in``) and
    into the lines' received quantities; returns the lines that moved."""
    to_id = transfer.to_warehouse_id
    lock_warehouses(tenant_id, (to_id,))
    moving = [line for line in lines if amounts.get(line.sku)]
    ledger = _lock_stock(tenant_id, created_by, moving, [to_id], create_in=to_id)
    incoming = []
    for line in moving:
        quantity = amounts[line.sku]
        row = ledger.stocks[(line.product_id, to_id)]
        ledger.change(
            row,
            "on_hand",
            row.on_hand + quantity,
            "transfer_in",
            note=f"Received from warehouse {transfer.from_warehouse_id}",
            reference=transfer.id,
        )
        incoming.append((row, -quantity))
        line.received_quantity += quantity
    ledger.flush()
    _change_incoming(incoming)
    _save_lines(moving)
    return moving


@raises(
    "TRANSFER_NOT_FOUND",
    "INVALID_TRANSFER_STATUS",
    "TRANSFER_LINE_NOT_FOUND",
    "RECEIPT_EXCEEDS_SHIPPED",
)
def receive_transfer(
    tenant_id: str,
    transfer_id: str,
    receipt: list[dict[str, Any]] | None,
    created_by: str,
) -> dict[str, Any]:
    """Receive what is in transit into the destination (``transfer_in``): everything, or
    ``receipt`` ``[{sku, quantity}]`` (per line, partly). When every line is received in
    full the transfer is ``received``."""

    def apply() -> dict[str, Any]:
        with write_transaction():
            transfer = _locked_transfer(tenant_id, transfer_id)
            if transfer.status != "in_transit":
                raise _status_error(transfer, "received", ("in_transit",))
            lines = _lines_of([transfer.id])[transfer.id]
            amounts = _receipt_amounts(transfer, lines, receipt)
            moving = _receive_lines(tenant_id, created_by, transfer, lines, amounts)
            now = now_ms()
            if all(line.outstanding == 0 for line in lines):
                _save_status(transfer, "received", "received_at", now)
            else:
                _save_status(transfer, "in_transit", None, now)
            shown = serialize_transfer(transfer, lines)
            received = [{"sku": line.sku, "quantity": amounts[line.sku]} for line in moving]
            _emit(tenant_id, "transfer.received", {**shown, "receipt": received})
            return shown

    result: dict[str, Any] = run_with_retry(apply)
    return result


@raises("TRANSFER_NOT_FOUND", "INVALID_TRANSFER_STATUS", "WAREHOUSE_INACTIVE")
def cancel_transfer(tenant_id: str, transfer_id: str, created_by: str) -> dict[str, Any]:
    """Cancel a draft, or a shipment in transit: what is not yet received returns to the
    source (``transfer_in`` there), and leaves the destination's ``incoming``."""

    def apply() -> dict[str, Any]:
        with write_transaction():
            transfer = _locked_transfer(tenant_id, transfer_id)
            if transfer.status not in ("draft", "in_transit"):
                raise _status_error(transfer, "cancelled", ("draft", "in_transit"))
            lines = _lines_of([transfer.id])[transfer.id]
            if transfer.status == "in_transit":
                from_id, to_id = transfer.from_warehouse_id, transfer.to_warehouse_id
                warehouses = lock_warehouses(tenant_id, (from_id, to_id))
                source = warehouses.get(from_id)
                if source is not None and not source.is_active:
                    raise ApiError(
                        "WAREHOUSE_INACTIVE",
                        "The source warehouse is inactive: activate it to take the stock "
                        "back, or receive the transfer.",
                        details={"warehouse_id": from_id},
                    )
                moving = [line for line in lines if line.outstanding]
                ledger = _lock_stock(
                    tenant_id, created_by, moving, [from_id, to_id], create_in=from_id
                )
                incoming = []
                for line in moving:
                    quantity = line.outstanding
                    row = ledger.stocks[(line.product_id, from_id)]
                    ledger.change(
                        row,
                        "on_hand",
                        row.on_hand + quantity,
                        "transfer_in",
                        note="Returned: transfer cancelled in transit",
                        reference=transfer.id,
                    )
                    incoming.append((ledger.stocks[(line.product_id, to_id)], -quantity))
                    line.returned_quantity += quantity
                ledger.flush()
                _change_incoming(incoming)
                _save_lines(moving)
            _save_status(transfer, "cancelled", "cancelled_at", now_ms())
            shown = serialize_transfer(transfer, lines)
            _emit(tenant_id, "transfer.cancelled", shown)
            return shown

    result: dict[str, Any] = run_with_retry(apply)
    return result


__all__ = [
    "TRANSFER_FIELDS",
    "cancel_transfer",
    "create_transfer",
    "get_transfer",
    "list_transfers",
    "receive_transfer",
    "serialize_transfer",
    "ship_transfer",
]
