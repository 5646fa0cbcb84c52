"""Inventory that landed with DESIGN 14: transfers between warehouses (list, detail, create a
draft, ship, receive whole or per line, cancel), relative adjustments, a listing's
allocation and a bundle's components. Every action is the API's own request."""

from flask import request

from ..files.imports import IMPORT_TYPES
from ..transfers.models import TRANSFER_STATUSES
from .gateway import segment
from .pages_catalog import product_page, stock_page
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
NEW_LINES = 5  # blank lines on the create form (the API takes up to its own bound)


def _warehouses():
    return api("GET", "/api/inventory/warehouses", {"limit": 100})


# -- transfers -----------------------------------------------------------------------------


def _transfers_page(status=200, errors=(), form=None):
    query = args_of("status", "from_warehouse_id", "to_warehouse_id", "sku", "cursor")
    answer = api("GET", "/api/inventory/transfers", {**query, "limit": LIST_LIMIT})
    warehouses = _warehouses()
    return render(
        "console/transfers.html",
        status if status != 200 else status_of(answer),
        answer=answer,
        warehouses=warehouses,
        names={w["id"]: w["name"] for w in (warehouses.data or [])},
        query=query,
        statuses=TRANSFER_STATUSES,
        new_lines=NEW_LINES,
        form=form or {},
        errors=[*errors, first_error(answer, warehouses)],
    )


@bp.route("/inventory/transfers")
def transfers():
    """Transfers with the API's filters and cursors, and the form that drafts one."""
    return _transfers_page()


def _lines(sku_field="sku", quantity_field="quantity"):
    """The filled rows of a repeated form group (``sku_0``, ``quantity_0``, ...) as
    ``{sku, quantity}``; a half-filled row goes to the API as it is (it names the gap)."""
    rows = []
    index = 0
    while f"{sku_field}_{index}" in request.form and index < 200:
        sku, quantity = form_text(f"{sku_field}_{index}"), form_int(f"{quantity_field}_{index}")
        if sku is not None or quantity is not None:
            rows.append(present(sku=sku, quantity=quantity))
        index += 1
    return rows


@bp.route("/inventory/transfers", methods=["POST"])
def create_transfer():
    """Draft a transfer between two own warehouses."""
    body = present(
        from_warehouse_id=form_text("from_warehouse_id"),
        to_warehouse_id=form_text("to_warehouse_id"),
        reference=form_text("reference"),
        lines=_lines(),
    )
    answer = api("POST", "/api/inventory/transfers", body=body)
    if answer.ok:
        return done("console.transfer", "transfer-created", transfer_id=answer.data["id"])
    return _transfers_page(answer.status, [answer.error], form=request.form)


def _transfer_page(transfer_id, status=200, errors=()):
    answer = api("GET", f"/api/inventory/transfers/{segment(transfer_id)}")
    warehouses = _warehouses()
    return render(
        "console/transfer.html",
        status if status != 200 else status_of(answer),
        transfer_id=transfer_id,
        answer=answer,
        names={w["id"]: w["name"] for w in (warehouses.data or [])},
        errors=[*errors, first_error(answer)],
    )


@bp.route("/inventory/transfers/<string:transfer_id>")
def transfer(transfer_id):
    """A transfer with its lines, and what can be done with it in its status."""
    return _transfer_page(transfer_id)


TRANSFER_NOTICES = {"ship": "transfer-shipped", "cancel": "transfer-cancelled"}


@bp.route("/inventory/transfers/<string:transfer_id>/<any(ship, cancel):action>", methods=["POST"])
def transfer_action(transfer_id, action):
    """Ship a draft (its stock leaves the source) or cancel (what is in transit returns)."""
    answer = api("POST", f"/api/inventory/transfers/{segment(transfer_id)}/{action}")
    if answer.ok:
        return done("console.transfer", TRANSFER_NOTICES[action], transfer_id=transfer_id)
    return _transfer_page(transfer_id, answer.status, [answer.error])


@bp.route("/inventory/transfers/<string:transfer_id>/receive", methods=["POST"])
def receive_transfer(transfer_id):
    """Receive everything in transit, or the quantities given per line (partly is fine)."""
    body = None
    if request.form.get("whole") != "1":
        rows = []
        for sku in request.form.getlist("sku"):
            quantity = form_int(f"receive_{sku}")
            if quantity not in (None, 0):
                rows.append({"sku": sku, "quantity": quantity})
        body = {"lines": rows}  # none filled in: the API says what is missing
    path = f"/api/inventory/transfers/{segment(transfer_id)}/receive"
    answer = api("POST", path, body=body)
    if answer.ok:
        return done("console.transfer", "transfer-received", transfer_id=transfer_id)
    return _transfer_page(transfer_id, answer.status, [answer.error])


# -- relative adjustments --------------------------------------------------------------------


@bp.route("/inventory/<string:sku>/adjust", methods=["POST"])
def adjust_stock(sku):
    """Add to or take from the on-hand level (a ledger entry with its reason), atomically."""
    body = present(
        warehouse_id=form_text("warehouse_id"),
        delta=form_int("delta"),
        reason=form_text("reason"),
        note=form_text("note"),
    )
    answer = api("POST", f"/api/inventory/{segment(sku)}/adjustments", body=body)
    if answer.ok:
        return done("console.stock", "stock-adjusted", sku=sku)
    return stock_page(sku, answer.status, [answer.error], form=request.form)


# -- a listing's allocation, a bundle's components ------------------------------------------


@bp.route("/products/<string:sku>/listings/<string:marketplace>", methods=["POST"])
def update_listing(sku, marketplace):
    """Change a listing's stock buffer and allocation (cap, share, fixed quantity, the
    warehouses that feed it) through the listing PATCH; the listing goes pending."""
    body = {
        "stock_buffer": form_int("stock_buffer"),
        "allocation_pct": form_int("allocation_pct"),
        "max_quantity": form_int("max_quantity"),  # blank: null, no cap
        "fixed_quantity": form_int("fixed_quantity"),  # blank: null, follows the stock
        "warehouse_ids": request.form.getlist("warehouse_ids") or None,
    }
    for name in ("stock_buffer", "allocation_pct"):
        if body[name] is None:
            del body[name]  # blank: left as it is (the API's default stays)
    path = f"/api/products/{segment(sku)}/listings/{segment(marketplace)}"
    answer = api("PATCH", path, body=body)
    if answer.ok:
        return done("console.product", "listing-updated", sku=sku)
    return product_page(sku, answer.status, [answer.error])


@bp.route("/products/<string:sku>/components", methods=["POST"])
def update_components(sku):
    """Make the product a bundle of the SKUs given, change them, or (none) no bundle."""
    rows = _lines("component_sku", "component_quantity")
    answer = api("PATCH", f"/api/products/{segment(sku)}", body={"components": rows})
    if answer.ok:
        return done("console.product", "components-set", sku=sku)
    return product_page(sku, answer.status, [answer.error])


# -- CSV imports ---------------------------------------------------------------------------


def _imports_page(status=200, errors=(), form=None):
    jobs = {
        kind: api("GET", "/api/ai-jobs", {"type": f"{kind}_import", "limit": 5})
        for kind in IMPORT_TYPES
    }
    return render(
        "console/imports.html",
        status,
        jobs=jobs,
        import_types=IMPORT_TYPES,
        form=form or {},
        errors=list(errors),
    )


@bp.route("/inventory/imports")
def imports():
    """Upload a CSV file (products, stock levels or listings), with a dry run; the recent
    imports of each kind."""
    return _imports_page()


@bp.route("/inventory/imports", methods=["POST"])
def create_import():
    """Hand the file to ``POST /api/imports``; its job's page shows progress and row errors."""
    upload = request.files.get("file")
    form = present(type=form_text("type"), dry_run="true" if request.form.get("dry_run") else None)
    if upload is not None and upload.filename:
        form["file"] = (upload.stream, upload.filename, upload.mimetype or "text/csv")
    answer = api("POST", "/api/imports", form=form)
    if answer.ok:
        return done("console.job", "import-queued", job_id=answer.data["job_id"])
    return _imports_page(answer.status, [answer.error], form=request.form)
