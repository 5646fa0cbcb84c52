"""``commerce-api warehouses ...``: manage a tenant's warehouses from the command line."""

import click
from flask.cli import with_appcontext

from ..auth.services import get_tenant
from ..cli_output import call_service, print_result, print_rows
from .services import create_warehouse, serialize_warehouse, tenant_warehouses


def register(cli):
    @cli.group()
    def warehouses():
        """Manage warehouses."""

    @warehouses.command("create")
    @click.option("--tenant", "tenant_id", required=True)
    @click.option("--name", required=True)
    @click.option("--type", "kind", type=click.Choice(["own", "FBA", "FBS"]), default="own")
    @click.option("--marketplace", help="The marketplace operating an FBA/FBS warehouse.")
    @click.option("--address")
    @click.option("--inactive", is_flag=True, help="Create it inactive.")
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def warehouses_create(tenant_id, name, kind, marketplace, address, inactive, as_json):
        """Create a warehouse (own, or marketplace-operated and read-only); prints its id."""
        data = {"name": name, "type": kind, "marketplace": marketplace, "address": address}
        data["is_active"] = not inactive
        warehouse = call_service(create_warehouse, tenant_id, data)
        text = f"warehouse {warehouse['id']} ({warehouse['name']}, {warehouse['type']})"
        print_result(warehouse, as_json, text)

    @warehouses.command("list")
    @click.option("--tenant", "tenant_id", required=True)
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def warehouses_list(tenant_id, as_json):
        """List a tenant's warehouses."""
        call_service(get_tenant, tenant_id)
        rows = [serialize_warehouse(w) for w in tenant_warehouses(tenant_id)]
        print_rows(rows, as_json, _warehouse_line)


def _warehouse_line(row):
    state = "active" if row["is_active"] else "inactive"
    extra = f" ({row['marketplace']})" if row["marketplace"] else ""
    return f"{row['id']}  {row['type']:4}{extra}  {state:8}  {row['name']}"
