"""The ``commerce-api`` command (Flask's click CLI)."""

import os

import click
from flask.cli import FlaskGroup, with_appcontext

from . import backup, create_app, crypto, demo
from .auth.models import Tenant
from .auth.services import (
    create_key,
    create_tenant,
    get_tenant,
    list_keys,
    parse_scopes,
    revoke_key,
    serialize_key,
    set_plan,
)
from .cli_output import call_service, fail, print_result, print_rows, stop
from .config import ConfigError, check_drivers, load_config
from .db import db
from .files import commands as files_commands
from .health.routes import VERSION
from .inventory import commands as inventory_commands
from .jobs import commands as jobs_commands
from .marketplaces import commands as marketplaces_commands
from .migrations import upgrade
from .orders import commands as orders_commands
from .schema_guard import require_schema
from .serve import serve
from .timeutil import parse_timestamp

# The commands that may find (and create) an empty database; every other one refuses.
CREATES_SCHEMA = frozenset(("init-db", "demo", "serve"))


def _top_command():
    """The name of the command line's first command (``keys`` for ``keys revoke``)."""
    ctx = click.get_current_context(silent=True)
    names = []
    while ctx is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return names[-2] if len(names) >= 2 else None


def _create_app():
    config = load_config()
    try:
        check_drivers(config)
    except ConfigError as error:
        stop(str(error))
    if _top_command() not in CREATES_SCHEMA:
        require_schema(config["DATABASE_URL"])
    return create_app()


@click.group(
    cls=FlaskGroup, create_app=_create_app, add_default_commands=False, add_version_option=False
)
@click.version_option(VERSION, prog_name="commerce-api", message="%(prog)s %(version)s")
def cli():
    """Commerce API administration."""


@cli.command("init-db")
@with_appcontext
def init_db_command():
    """Create or upgrade the schema (idempotent)."""
    with db.connection_context():
        applied = upgrade(db.obj)
    click.echo(f"schema up to date ({len(applied)} migration(s) applied)", err=True)


@cli.group()
def tenants():
    """Manage tenants."""


def _tenant_payload(tenant: Tenant) -> dict[str, str]:
    return {"id": tenant.id, "name": tenant.name, "plan": tenant.plan}


@tenants.command("create")
@click.option("--name", required=True)
@click.option("--plan", type=click.Choice(["starter", "growth", "enterprise"]), default="starter")
@click.option("--json", "as_json", is_flag=True)
@with_appcontext
def tenants_create(name, plan, as_json):
    """Create a tenant; prints its id (a UUID)."""
    tenant = call_service(create_tenant, name, plan)
    print_result(_tenant_payload(tenant), as_json, f"tenant {tenant.id} ({name}, {plan})")


@tenants.command("set-plan")
@click.option("--tenant", "tenant_id", required=True)
@click.option("--plan", type=click.Choice(["starter", "growth", "enterprise"]), required=True)
@click.option("--json", "as_json", is_flag=True)
@with_appcontext
def tenants_set_plan(tenant_id, plan, as_json):
    """Change a tenant's plan."""
    tenant = call_service(set_plan, tenant_id, plan)
    print_result(_tenant_payload(tenant), as_json, f"tenant {tenant.id} is now on {plan}")


@cli.group()
def keys():
    """Manage API keys."""


@keys.command("create")
@click.option("--tenant", "tenant_id", required=True)
@click.option("--name", required=True)
@click.option("--scopes", required=True, help="Comma list of scopes, or 'all'.")
@click.option("--expires-at", help="ISO 8601 timestamp.")
@click.option("--allow-ip", "allow_ips", multiple=True, help="CIDR; repeat for more.")
# the columns are 32-bit integers
@click.option("--rate-limit-per-minute", type=click.IntRange(min=1, max=2**31 - 1))
@click.option("--rate-limit-per-hour", type=click.IntRange(min=1, max=2**31 - 1))
@click.option("--json", "as_json", is_flag=True)
@with_appcontext
def keys_create(
    tenant_id,
    name,
    scopes,
    expires_at,
    allow_ips,
    rate_limit_per_minute,
    rate_limit_per_hour,
    as_json,
):
    """Create an API key; the secret is shown only here."""
    expires_ms = None
    if expires_at:
        try:
            expires_ms = parse_timestamp(expires_at)
        except ValueError:
            fail(f"--expires-at is not an ISO 8601 timestamp: {expires_at}")
    key, secret = call_service(
        create_key,
        tenant_id,
        name,
        call_service(parse_scopes, scopes),
        expires_at=expires_ms,
        allowed_ips=list(allow_ips),
        rate_limit_per_minute=rate_limit_per_minute,
        rate_limit_per_hour=rate_limit_per_hour,
    )
    payload = {**serialize_key(key), "key": secret}
    print_result(
        payload, as_json, f"key id: {key.id}\nsecret: {secret}\n(the secret is not shown again)"
    )


@keys.command("list")
@click.option("--tenant", "tenant_id", required=True)
@click.option("--json", "as_json", is_flag=True)
@with_appcontext
def keys_list(tenant_id, as_json):
    """List a tenant's keys (never their secrets)."""
    call_service(get_tenant, tenant_id)
    print_rows([serialize_key(k) for k in list_keys(tenant_id)], as_json, _key_line)


def _key_line(row):
    state = "revoked" if row["revoked_at"] else "active"
    return f"{row['id']}  {row['prefix']}...  {state:8}  {row['name']}  {','.join(row['scopes'])}"


@keys.command("revoke")
@click.argument("key_id")
@click.option("--json", "as_json", is_flag=True)
@with_appcontext
def keys_revoke(key_id, as_json):
    """Revoke a key (takes effect within the auth cache time, 5 s by default)."""
    key = call_service(revoke_key, key_id)
    print_result(serialize_key(key), as_json, f"revoked {key_id}")


@cli.group()
def secrets():
    """Secrets at rest (COMMERCE_SECRET_KEY)."""


@secrets.command("rotate")
@click.option("--json", "as_json", is_flag=True)
@with_appcontext
def secrets_rotate(as_json):
    """Re-encrypt every stored secret with the first key of COMMERCE_SECRET_KEY."""
    try:
        with db.connection_context():
            counts = crypto.rotate_all()
    except crypto.SecretUnreadable as error:
        fail(f"{error} Nothing after the unreadable value was re-encrypted.")
    total = sum(counts.values())
    text = f"re-encrypted {total} stored secret(s) with the first key; the others may go"
    print_result({"rotated": counts, "total": total}, as_json, text)


# no app in the master: each gunicorn process builds its own (after the metrics folder is set)
@cli.command("serve", with_appcontext=False)
@click.option("--bind", default="127.0.0.1:8000", show_default=True)
@click.option("--workers", type=int, default=2, show_default=True)
@click.option(
    "--threads",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Threads per process (gthread); 1 gives sync workers.",
)
@click.option(
    "--with-worker",
    is_flag=True,
    help="Also run the job worker beside the API (restarted when it exits).",
)
def serve_command(bind, workers, threads, with_worker):
    """Serve the API with gunicorn (and optionally the job worker)."""
    serve(bind=bind, workers=workers, with_worker=with_worker, threads=threads)


# Domain commands: demo, warehouses, marketplaces, orders, worker; backup and restore.
for _module in (
    demo,
    inventory_commands,
    marketplaces_commands,
    orders_commands,
    jobs_commands,
    files_commands,
    backup,
):
    _module.register(cli)


def main():
    os.environ.setdefault("FLASK_APP", "commerce_api")
    cli.main(prog_name="commerce-api")


if __name__ == "__main__":
    main()
