"""``POST /api/imports``: products, stock levels or listings from a CSV file, as a job.

The API reads the upload once: it checks the header (unknown, missing or repeated columns
refuse the file at once), counts the rows and keeps the bytes in the database in parts
(``models.ImportPart``). The job (``tasks.py``) reads the parts back as a stream, twice:
first for the keys (a SKU, or SKU and warehouse, or SKU and marketplace, given by more
than one row fails on every such row: which one was meant is not ours to guess), then to
apply. Each row is loaded by the schema the API's own request uses, and applied by the
same service, a chunk of rows to a transaction (``chunk_rows`` of the type: 200, or
500 for stock levels, one bulk stock change): a chunk is atomic (a worker killed
halfway leaves whole chunks), and within it a row that the service refuses is rolled back
alone (a savepoint) and reported with its row number, column and code. A row equal to
what is stored changes nothing (no ledger row, no event, no push), so the same file twice
changes nothing the second time, and a job retried after a crash picks up where it
stopped. ``dry_run`` runs every chunk the same way and rolls it back.

Cells: ``csvio.cell_value`` (an empty cell is null, or "not given" for a field that
cannot be null). Columns: the request schema's fields, plus the export's read-only
columns, which are ignored, so that an export imports unchanged.
"""

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..db import write_transaction
from ..errors import ApiError
from ..ids import new_id
from ..timeutil import now_ms
from .appliers import APPLIERS
from .columns import file_type
from .csvio import CsvError, iter_records
from .models import PART_BYTES, ImportPart, ImportUpload
from .rows import Outcome, Row, read_rows, repeated_keys, row_error, row_key

IMPORT_TYPES = ("products", "inventory", "listings")
MAX_IMPORT_BYTES = 50 * 1024 * 1024
SCOPES = {
    "products": "products:write",
    "inventory": "inventory:write",
    "listings": "products:write",
}


# The upload --------------------------------------------------------------------------------


def _parts(stream, size):
    while True:
        part = stream.read(size)
        if not part:
            return
        yield part


def store_upload(
    tenant_id: str,
    kind: str,
    stream,
    filename: str | None,
    dry_run: bool,
    created_by: str | None,
    enqueue: Callable[[str], str],
) -> dict[str, Any]:
    """Check and keep an uploaded file, and queue its job (``enqueue(upload_id)`` returns
    the job id) in the same transaction; returns the upload's summary."""
    spec = file_type(kind)
    upload_id = new_id("import")
    size = rows = 0
    header = None
    with write_transaction():
        chunks = []

        def kept():
            nonlocal size
            for seq, part in enumerate(_parts(stream, PART_BYTES)):
                size += len(part)
                if size > MAX_IMPORT_BYTES:
                    raise ApiError("PAYLOAD_TOO_LARGE", details={"max_bytes": MAX_IMPORT_BYTES})
                chunks.append({"upload_id": upload_id, "seq": seq, "data": part})
                if len(chunks) >= 8:
                    ImportPart.insert_many(chunks).execute()
                    chunks.clear()
                yield part

        try:
            for record in iter_records(kept()):
                if header is None:
                    header = spec.check_header(record)
                else:
                    rows += 1
        except CsvError as error:
            raise ApiError("CSV_INVALID", str(error)) from None
        if chunks:
            ImportPart.insert_many(chunks).execute()
        if header is None:
            raise ApiError("CSV_EMPTY", "The file has no header row.")
        job_id = enqueue(upload_id)
        ImportUpload.create(
            id=upload_id,
            tenant_id=tenant_id,
            type=kind,
            dry_run=dry_run,
            filename=(filename or None) and filename[:255],
            size_bytes=size,
            rows=rows,
            job_id=job_id,
            created_by=created_by,
            created_at=now_ms(),
        )
    return {"id": upload_id, "job_id": job_id, "type": kind, "rows": rows, "dry_run": dry_run}


def upload_parts(upload_id: str) -> Iterator[bytes]:
    """The upload's bytes, a part at a time (one part in memory)."""
    seq = 0
    while True:
        row = (
            ImportPart.select(ImportPart.data)
            .where((ImportPart.upload_id == upload_id) & (ImportPart.seq == seq))
            .tuples()
            .first()
        )
        if row is None:
            return
        yield bytes(row[0])
        seq += 1


def delete_upload(upload_id: str) -> None:
    with write_transaction():
        ImportPart.delete().where(ImportPart.upload_id == upload_id).execute()
        ImportUpload.delete().where(ImportUpload.id == upload_id).execute()


class _Rollback(Exception):
    """Raised inside a dry run's chunk so that its transaction is rolled back."""


def run_import(
    tenant_id: str,
    kind: str,
    parts: Callable[[], Iterable[bytes]],
    dry_run: bool,
    created_by: str | None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Apply (or, with ``dry_run``, try and roll back) an import; returns the job result.

    ``parts()`` gives the file's bytes anew on each call (it is read twice)."""
    spec = file_type(kind)
    try:
        repeated = repeated_keys(spec, read_rows(spec, parts()))
    except CsvError as error:
        raise ApiError("CSV_INVALID", str(error)) from None
    applier = APPLIERS[kind](tenant_id, created_by)
    outcome = Outcome()
    done = 0
    chunk: list[Row] = []

    def flush():
        nonlocal done
        if chunk:
            _apply_chunk(applier, chunk, outcome, dry_run)
            done += len(chunk)
            chunk.clear()
            if progress is not None:
                progress(done)

    for row in read_rows(spec, parts()):
        if row.error is not None:
            outcome.fail(row.error)
            done += 1
            continue
        key = row_key(spec, row.values)
        if key in repeated:
            named = " / ".join(map(str, key))
            message = f"Another row of the file names {named}: which one is meant is unclear."
            outcome.fail(row_error(row.number, spec.key[0], "DUPLICATE_ROW", message))
            done += 1
            continue
        chunk.append(row)
        if len(chunk) >= applier.chunk_rows:
            flush()
    flush()
    rows = done
    return {
        "type": kind,
        "dry_run": dry_run,
        "rows": rows,
        "created": outcome.created,
        "updated": outcome.updated,
        "unchanged": outcome.unchanged,
        "failed": outcome.failed,
        "errors": sorted(outcome.errors, key=lambda e: e["row"]),
        "errors_truncated": outcome.failed > len(outcome.errors),
    }


def _apply_chunk(applier, rows, outcome, dry_run):
    """One chunk in one transaction (rolled back in a dry run); each row a savepoint."""
    if not dry_run:
        with write_transaction():
            applier.apply(rows, outcome)
        return
    try:
        with write_transaction():
            applier.apply(rows, outcome)
            raise _Rollback
    except _Rollback:
        pass
