"""The import jobs: ``products_import``, ``inventory_import`` and ``listings_import``,
queued by ``POST /api/imports`` only (``imports.py`` does the work)."""

from typing import Any

from ..errors import ApiError
from ..jobs.errors import JobFailed
from ..jobs.models import Job
from ..jobs.registry import job_type, register_marked
from ..jobs.runtime import JobContext
from .imports import delete_upload, run_import, upload_parts
from .models import ImportUpload
from .shapes import ImportResultSchema

IMPORT_TIMEOUT_SECONDS = 3600  # 50 MB of rows on a slow database


def _run(job: Job, ctx: JobContext) -> dict[str, Any]:
    upload_id = (job.params or {}).get("upload_id")
    upload = ImportUpload.get_or_none(
        (ImportUpload.id == upload_id) & (ImportUpload.tenant_id == job.tenant_id)
    )
    if upload is None:
        raise JobFailed("IMPORT_NOT_FOUND", "The uploaded file is gone.")
    total = upload.rows
    ctx.progress(0, total)
    try:
        result = run_import(
            job.tenant_id,
            upload.type,
            lambda: upload_parts(upload.id),
            upload.dry_run,
            f"import:{upload.id}",
            progress=lambda done: ctx.progress(min(done, total), total),
        )
    except ApiError as error:  # the file itself: not retried
        delete_upload(upload.id)
        raise JobFailed(error.code, error.message, details=error.details) from None
    ctx.progress(total, total)
    delete_upload(upload.id)
    return {"upload_id": upload.id, "filename": upload.filename, **result}


def _register(kind: str, scope: str) -> None:
    job_type(
        f"{kind}_import",
        scope=scope,
        internal=True,
        typical_seconds=30,
        timeout=IMPORT_TIMEOUT_SECONDS,
        result=ImportResultSchema,
    )(_run)


# the domain's read scope shows the job (as for the other internal types); the upload
# itself needs the write scope of what the file writes (routes.py)
_register("products", "products:read")
_register("inventory", "inventory:read")
_register("listings", "products:read")


def register() -> None:
    """Register this domain's background work and checks (``commerce_api.tasks``)."""
    register_marked(__name__)
