"""``commerce-api orders import``: load orders from a file as if pulled from their marketplace."""

import json

import click
from flask.cli import with_appcontext

from ..auth.services import get_tenant
from ..cli_output import call_service, fail, print_json
from ..marketplaces.services import connected_marketplaces
from .ingest import import_orders


def register(cli):
    @cli.group()
    def orders():
        """Manage orders."""

    @orders.command("import")
    @click.option("--tenant", "tenant_id", required=True)
    @click.option(
        "--file",
        "path",
        required=True,
        type=click.Path(dir_okay=False, allow_dash=True),
        help="A JSON list of orders ('-' reads standard input).",
    )
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def orders_import(tenant_id, path, as_json):
        """Import orders (upsert by marketplace and external_order_id; never duplicates)."""
        call_service(get_tenant, tenant_id)
        try:
            with click.open_file(path, encoding="utf-8") as handle:
                items = json.load(handle)
        except OSError as exc:
            fail(f"cannot read {path}: {exc.strerror or exc}")
        except (ValueError, UnicodeDecodeError) as exc:
            fail(f"INVALID_JSON: {path} is not valid JSON ({exc})")
        summary = call_service(import_orders, tenant_id, items)
        connected = set(connected_marketplaces(tenant_id))
        unconnected = sorted(
            {item["marketplace"] for item in items if item["marketplace"] not in connected}
        )
        summary["unconnected_marketplaces"] = unconnected
        if as_json:
            print_json(summary)
            return
        click.echo(
            f"{summary['created']} created, {summary['updated']} updated, "
            f"{summary['unchanged']} unchanged"
        )
        for name in unconnected:
            click.echo(
                f"warning: {name} is not connected; its orders cannot be shipped or cancelled "
                f"until it is (commerce-api marketplaces connect)",
                err=True,
            )
