"""Files API: ``POST /api/imports`` and ``GET /api/exports/<list>.csv``."""

from flask import Response, g, stream_with_context
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..errors import ApiError, validation_error
from ..http.blueprint import Blueprint
from ..http.envelope import one
from ..http.request import upload_form
from ..jobs.services import enqueue_job
from ..timeutil import format_ms, now_ms
from . import exports
from .imports import IMPORT_TYPES, MAX_IMPORT_BYTES, SCOPES, store_upload
from .schemas import (
    IMPORT_REQUEST_BODY,
    AdjustmentExportArgsSchema,
    ImportEnvelopeSchema,
    InventoryExportArgsSchema,
    OrderExportArgsSchema,
    ProductExportArgsSchema,
)

blp = Blueprint(
    "files",
    __name__,
    url_prefix="/api",
    description="Catalogue, stock, ledger and orders as CSV files: imports and exports.",
)

CSV_DESCRIPTION = "The CSV file, streamed: a header of the list's field names, a row per item."
CSV_HEADERS = {
    "Content-Disposition": {
        "description": 'An attachment: `attachment; filename="<export>-<YYYY-MM-DD>.csv"`.',
        "schema": {"type": "string"},
    },
    "Cache-Control": {"description": "`no-store`.", "schema": {"type": "string"}},
}
TRUE = ("true", "1", "yes", "on")
FALSE = ("false", "0", "no", "off", "")


def _dry_run(text):
    if text is None or text.strip().lower() in FALSE:
        return False
    if text.strip().lower() in TRUE:
        return True
    raise validation_error({"dry_run": ["Not a valid boolean (true or false)."]})


@blp.route("/imports")
class ImportViews(MethodView):
    upload_max_bytes = MAX_IMPORT_BYTES  # multipart/form-data, not JSON (http.request)

    @require_scope("products:write", "inventory:write")
    @blp.doc(requestBody=IMPORT_REQUEST_BODY)
    @blp.returns(202, ImportEnvelopeSchema)
    @blp.errors(
        "CSV_INVALID",
        "CSV_EMPTY",
        "CSV_UNKNOWN_COLUMN",
        "CSV_MISSING_COLUMN",
        "CSV_DUPLICATE_COLUMN",
        "QUEUE_FULL",
        body=True,
    )
    def post(self):
        """Import products, stock levels or listings from a CSV file (a job)"""
        form, files = upload_form(MAX_IMPORT_BYTES)
        kind = form.get("type")
        problems = {}
        if kind not in IMPORT_TYPES:
            problems["type"] = [f"Must be one of: {', '.join(IMPORT_TYPES)}."]
        upload = files.get("file")
        if upload is None:
            problems["file"] = ["Missing file."]
        # a part without a readable name comes as None: an unknown field all the same
        unknown = sorted(str(name or "") for name in set(form) - {"type", "dry_run"})
        unknown += sorted(str(name or "") for name in set(files) - {"file"})
        for name in unknown:
            problems[name] = ["Unknown field."]
        if problems:
            raise validation_error(problems)
        dry_run = _dry_run(form.get("dry_run"))
        scope = SCOPES[kind]
        if not g.auth.has_scope(scope):
            raise ApiError(
                "INSUFFICIENT_SCOPE",
                f"This import needs the {scope} scope.",
                details={"required_scope": scope},
            )
        tenant_id = g.auth.tenant_id

        def enqueue(upload_id):
            job = enqueue_job(
                tenant_id,
                f"{kind}_import",
                {"upload_id": upload_id},
                created_by=g.auth.created_by,
                internal=True,
                check_capacity=False,
            )
            return job.id

        summary = store_upload(
            tenant_id, kind, upload.stream, upload.filename, dry_run, g.auth.created_by, enqueue
        )
        return one(summary, 202, headers={"Location": f"/api/ai-jobs/{summary['job_id']}"})


def _export(name, args):
    export = exports.EXPORTS[name]
    # a filter the list refuses (an unknown warehouse, say) is its 4xx now: once the
    # stream has begun, the status line is sent and an error could only cut it short
    export.page(g.auth.tenant_id, {**args, "limit": 1, "cursor": None})
    stamp = format_ms(now_ms())[:10]
    body = stream_with_context(exports.stream_csv(export, g.auth.tenant_id, args))
    return Response(
        body,
        200,
        mimetype="text/csv",
        headers={
            "Content-Disposition": f'attachment; filename="{name}-{stamp}.csv"',
            "Cache-Control": "no-store",
        },
    )


def _export_view(name, args_schema, scope, summary):
    @require_scope(scope)
    @blp.arguments(args_schema, location="query")
    @blp.returns(
        200,
        {"type": "string"},
        content_type="text/csv",
        description=CSV_DESCRIPTION,
        headers=CSV_HEADERS,
    )
    @blp.errors("INVALID_CURSOR")
    def get(self, args):
        return _export(name, args)

    get.__doc__ = summary
    return type(f"{name.title()}ExportViews", (MethodView,), {"get": get})


blp.route("/exports/products.csv")(
    _export_view("products", ProductExportArgsSchema, "products:read", "Export products as CSV")
)
blp.route("/exports/inventory.csv")(
    _export_view(
        "inventory", InventoryExportArgsSchema, "inventory:read", "Export stock levels as CSV"
    )
)
blp.route("/exports/adjustments.csv")(
    _export_view(
        "adjustments",
        AdjustmentExportArgsSchema,
        "inventory:read",
        "Export the stock ledger as CSV",
    )
)
blp.route("/exports/orders.csv")(
    _export_view("orders", OrderExportArgsSchema, "orders:read", "Export orders as CSV")
)
