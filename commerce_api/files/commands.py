"""``commerce-api import`` and ``commerce-api export``: the files API for an operator.

``import`` runs the import in this process (no worker needed) through the same code as
the import job, with a progress bar on a terminal; ``export`` writes the same CSV as
``GET /api/exports/<list>.csv``, to a file or to standard output.
"""

import contextlib
import sys

import click
import marshmallow as ma
from flask.cli import with_appcontext

from ..auth.services import get_tenant
from ..cli_output import call_service, fail, print_result
from ..errors import ApiError
from . import exports
from .csvio import CsvError, iter_records
from .imports import IMPORT_TYPES, run_import
from .schemas import (
    AdjustmentExportArgsSchema,
    InventoryExportArgsSchema,
    OrderExportArgsSchema,
    ProductExportArgsSchema,
)

READ_BYTES = 1024 * 1024
EXPORT_ARGS = {
    "products": ProductExportArgsSchema,
    "inventory": InventoryExportArgsSchema,
    "adjustments": AdjustmentExportArgsSchema,
    "orders": OrderExportArgsSchema,
}


def _file_parts(path):
    """The file's bytes a part at a time, each call a new read (``-``: standard input,
    read once and kept, since it cannot be read twice)."""
    if path == "-":
        data = sys.stdin.buffer.read()
        return lambda: iter([data])

    def parts():
        with open(path, "rb") as handle:
            while part := handle.read(READ_BYTES):
                yield part

    return parts


def _count_rows(parts):
    try:
        return max(sum(1 for _ in iter_records(parts())) - 1, 0)
    except CsvError as error:
        fail(f"CSV_INVALID: {error}")


def _summary(result):
    return (
        f"{result['rows']} rows: {result['created']} created, {result['updated']} updated, "
        f"{result['unchanged']} unchanged, {result['failed']} failed"
        + (" (dry run: nothing applied)" if result["dry_run"] else "")
    )


def register(cli):
    """Add ``import`` and ``export`` to the ``commerce-api`` command group."""
    cli.add_command(import_command)
    cli.add_command(export_command)


@click.command("import")
@click.option("--tenant", "tenant_id", required=True)
@click.option("--type", "kind", type=click.Choice(IMPORT_TYPES), required=True)
@click.option("--dry-run", is_flag=True, help="Check every row and apply nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True))
@with_appcontext
def import_command(tenant_id, kind, dry_run, as_json, path):
    """Import products, stock levels or listings from a CSV file (``-``: stdin)."""
    call_service(get_tenant, tenant_id)
    try:
        parts = _file_parts(path)
    except OSError as error:
        fail(f"cannot read {path}: {error.strerror}")
    total = _count_rows(parts)
    show = sys.stdout.isatty() and not as_json
    sink = None if show else _Null()
    with click.progressbar(length=total, label="importing", file=sink) as bar:
        shown = 0

        def progress(done):
            nonlocal shown
            bar.update(done - shown)
            shown = done

        result = call_service(
            run_import, tenant_id, kind, parts, dry_run, "cli:import", progress=progress
        )
    print_result(result, as_json, _summary(result))
    for error in result["errors"][:20] if not as_json else ():
        column = error["column"] or "-"
        click.echo(f"  row {error['row']} {column}: {error['code']} {error['message']}")
    if result["failed"]:
        sys.exit(1)


@click.command("export")
@click.argument("name", type=click.Choice(tuple(exports.EXPORTS)))
@click.option("--tenant", "tenant_id", required=True)
@click.option("--output", "-o", default="-", help="A file to write (default: stdout).")
@click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar="NAME=VALUE",
    help="A filter of the list endpoint (repeatable): status=active, sku=MUG-1 ...",
)
@with_appcontext
def export_command(name, tenant_id, output, filters):
    """Export products, stock levels, the ledger or orders as CSV."""
    call_service(get_tenant, tenant_id)
    args = _export_args(name, filters)
    export = exports.EXPORTS[name]
    with contextlib.ExitStack() as stack:
        handle = sys.stdout
        if output != "-":
            handle = stack.enter_context(open(output, "w", newline="", encoding="utf-8"))
        rows = [0]

        def count(n):
            rows[0] += n

        try:
            for chunk in exports.stream_csv(export, tenant_id, args, on_rows=count):
                handle.write(chunk)
        except ApiError as error:
            fail(f"{error.code}: {error.message}")
    if output != "-":
        click.echo(f"{rows[0]} rows written to {output}", err=True)


def _export_args(name, filters):
    """The export's list arguments from ``--filter NAME=VALUE`` options, validated."""
    query = {}
    for text in filters:
        key, sep, value = text.partition("=")
        if not sep:
            fail(f"--filter {text}: give NAME=VALUE")
        query[key] = value
    try:
        return EXPORT_ARGS[name]().load(query)
    except ma.ValidationError as error:
        fail(f"VALIDATION_ERROR: {error.messages}")


class _Null:
    """A file that swallows the progress bar when standard output is not a terminal."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False
