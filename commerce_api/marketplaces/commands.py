"""``commerce-api marketplaces ...``: connect marketplaces and pull their orders."""

import click
from flask.cli import with_appcontext

from ..auth.services import get_tenant
from ..cli_output import call_service, fail, print_result, print_rows
from ..orders.pulls import pull_connection
from .checks import check_connection
from .connections import delete_connection, update_connection
from .services import connect_marketplace, serialize_connection, tenant_connections

TEXT_SETTINGS = {
    "region",
    "marketplace_id",
    "seller_id",
    "endpoint",
    "token_endpoint",
    "shop_domain",
    "api_version",
}
LOCATIONS_PREFIX = "locations."  # shopify: --setting locations.<warehouse id>=<location gid>


def _parse_settings(pairs):
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=VALUE, got {pair!r}", param_hint="--setting")
        if name.startswith(LOCATIONS_PREFIX) and len(name) > len(LOCATIONS_PREFIX):
            settings.setdefault("locations", {})[name[len(LOCATIONS_PREFIX) :]] = value
            continue
        if name in TEXT_SETTINGS:  # amazon's and shopify's settings are text; others integers
            settings[name] = value
            continue
        try:
            settings[name] = int(value)
        except ValueError:
            raise click.BadParameter(f"{name} takes an integer", param_hint="--setting") from None
    return settings


def _parse_credentials(pairs, files):
    """``--credential NAME=VALUE`` and ``--credential-file NAME=PATH`` (``-``: standard
    input; the file's content less surrounding white space): None when neither is given."""
    if not pairs and not files:
        return None
    credentials = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(
                f"expected NAME=VALUE, got {pair!r}", param_hint="--credential"
            )
        credentials[name] = value
    for pair in files:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(
                f"expected NAME=PATH, got {pair!r}", param_hint="--credential-file"
            )
        try:
            with click.open_file(path, "r", encoding="utf-8") as handle:
                value = handle.read(MAX_TOKEN_LENGTH * 4 + 1).strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise click.BadParameter(f"{path}: {exc}", param_hint="--credential-file") from None
        credentials[name] = value
    return credentials


MAX_TOKEN_LENGTH = 2000  # as the API's api_token


def _read_token(api_token, token_file):
    """The token from ``--api-token`` or ``--api-token-file`` (``-``: standard input).

    The file's content is taken whole, less the surrounding white space (a trailing
    newline); a token on the command line shows in ``ps`` and shell history, a file or a
    pipe does not.
    """
    if token_file is None:
        return api_token
    if api_token is not None:
        raise click.UsageError("Give --api-token or --api-token-file, not both.")
    try:
        text = token_file.read(MAX_TOKEN_LENGTH * 4 + 1)
    except UnicodeDecodeError:
        raise click.BadParameter(
            "the file is not UTF-8 text", param_hint="--api-token-file"
        ) from None
    token = text.strip()
    if not token:
        raise click.BadParameter("the file holds no token", param_hint="--api-token-file")
    if len(token) > MAX_TOKEN_LENGTH:
        raise click.BadParameter(
            f"the token is longer than {MAX_TOKEN_LENGTH} characters",
            param_hint="--api-token-file",
        )
    if not token.isprintable():
        raise click.BadParameter(
            "the token holds line breaks or control characters", param_hint="--api-token-file"
        )
    return token


SETTING_HELP = (
    "sandbox: initial_orders, orders_per_pull, max_orders; amazon: region, "
    "marketplace_id, seller_id, endpoint, token_endpoint; http: batch_size; shopify: "
    "shop_domain, api_version, endpoint, locations.<warehouse id>=<location gid>."
)
CREDENTIAL_HELP = (
    "amazon: lwa_client_id, lwa_client_secret, refresh_token; shopify: "
    "access_token, webhook_secret."
)


def register(cli):
    @cli.group()
    def marketplaces():
        """Manage marketplace connections."""

    _add_connect(marketplaces)
    _add_update(marketplaces)
    _add_connection_commands(marketplaces)


def _add_connect(marketplaces):
    marketplaces.add_command(marketplaces_connect)


@click.command("connect")
@click.option("--tenant", "tenant_id", required=True)
@click.option("--marketplace", required=True, help="The marketplace's identifier, e.g. amazon_us.")
@click.option(
    "--connector", type=click.Choice(["sandbox", "http", "amazon", "shopify"]), required=True
)
@click.option("--base-url", help="http connector: the marketplace adapter's base URL.")
@click.option("--api-token", help="http connector: sent as 'Authorization: Bearer <token>'.")
@click.option(
    "--api-token-file",
    type=click.File("r", encoding="utf-8"),
    help="http connector: read the token from this file ('-': standard input) instead.",
)
@click.option(
    "--setting",
    "settings",
    multiple=True,
    metavar="NAME=VALUE",
    help=SETTING_HELP,
)
@click.option(
    "--credential",
    "credential_pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help=CREDENTIAL_HELP,
)
@click.option(
    "--credential-file",
    "credential_files",
    multiple=True,
    metavar="NAME=PATH",
    help="A credential read from a file ('-': standard input).",
)
@click.option("--json", "as_json", is_flag=True)
@with_appcontext
def marketplaces_connect(
    tenant_id,
    marketplace,
    connector,
    base_url,
    api_token,
    api_token_file,
    settings,
    credential_pairs,
    credential_files,
    as_json,
):
    """Connect a marketplace for a tenant (the operator may use private addresses)."""
    api_token = _read_token(api_token, api_token_file)
    connection = call_service(
        connect_marketplace,
        tenant_id,
        marketplace,
        connector,
        base_url=base_url,
        api_token=api_token,
        settings=_parse_settings(settings),
        credentials=_parse_credentials(credential_pairs, credential_files),
        created_by="cli",
        allow_private=True,
    )
    text = f"connection {connection.id} ({marketplace}, {connector})"
    print_result(serialize_connection(connection), as_json, text)


def _add_update(marketplaces):
    @marketplaces.command("update")
    @click.option("--tenant", "tenant_id", required=True)
    @click.option("--marketplace", required=True, help="The connected marketplace to change.")
    @click.option("--base-url", help="http connector: the adapter's new base URL.")
    @click.option("--api-token", help="http connector: the new Bearer token.")
    @click.option(
        "--api-token-file",
        type=click.File("r", encoding="utf-8"),
        help="http connector: read the new token from this file ('-': standard input).",
    )
    @click.option("--setting", "settings", multiple=True, metavar="NAME=VALUE")
    @click.option("--credential", "credential_pairs", multiple=True, metavar="NAME=VALUE")
    @click.option("--credential-file", "credential_files", multiple=True, metavar="NAME=PATH")
    @click.option("--status", type=click.Choice(["active", "disabled"]))
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def marketplaces_update(
        tenant_id,
        marketplace,
        base_url,
        api_token,
        api_token_file,
        settings,
        credential_pairs,
        credential_files,
        status,
        as_json,
    ):
        """Change a connection: URL, token, settings, or pause it (--status disabled)."""
        connection = _connection_of(tenant_id, marketplace)
        changes = {"base_url": base_url, "status": status}
        changes["api_token"] = _read_token(api_token, api_token_file)
        changes = {name: value for name, value in changes.items() if value is not None}
        if settings:
            changes["settings"] = _parse_settings(settings)
        credentials = _parse_credentials(credential_pairs, credential_files)
        if credentials is not None:
            changes["credentials"] = credentials
        if not changes:
            fail("nothing to change: give --base-url, --api-token, --setting or --status")
        connection = call_service(
            update_connection, tenant_id, connection.id, changes, allow_private=True
        )
        print_result(
            serialize_connection(connection), as_json, f"connection {connection.id} updated"
        )


def _add_connection_commands(marketplaces):
    """``disconnect``, ``check``, ``list`` and ``pull``."""

    @marketplaces.command("disconnect")
    @click.option("--tenant", "tenant_id", required=True)
    @click.option("--marketplace", required=True)
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def marketplaces_disconnect(tenant_id, marketplace, as_json):
        """Remove a connection: pulls and pushes stop; listings and sync history stay."""
        connection = _connection_of(tenant_id, marketplace)
        call_service(delete_connection, tenant_id, connection.id)
        print_result(
            {"id": connection.id, "marketplace": marketplace, "deleted": True},
            as_json,
            f"connection {connection.id} ({marketplace}) removed",
        )

    @marketplaces.command("check")
    @click.option("--tenant", "tenant_id", required=True)
    @click.option("--marketplace", required=True, help="The connected marketplace to check.")
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def marketplaces_check(tenant_id, marketplace, as_json):
        """Make one cheap authenticated call to the marketplace: ok, or what is wrong."""
        connection = _connection_of(tenant_id, marketplace)
        result = check_connection(connection)
        text = f"{marketplace}: {'ok' if result['ok'] else 'FAILED'}: {result['detail']}"
        print_result(result, as_json, text)
        if not result["ok"]:
            raise SystemExit(1)

    @marketplaces.command("list")
    @click.option("--tenant", "tenant_id", required=True)
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def marketplaces_list(tenant_id, as_json):
        """List a tenant's marketplace connections."""
        call_service(get_tenant, tenant_id)
        rows = [serialize_connection(row) for row in tenant_connections(tenant_id)]
        print_rows(rows, as_json, _connection_line)

    @marketplaces.command("pull")
    @click.option("--tenant", "tenant_id", required=True)
    @click.option("--marketplace", help="Only this marketplace (default: every active one).")
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def marketplaces_pull(tenant_id, marketplace, as_json):
        """Pull new and changed orders now (the worker does it periodically)."""
        call_service(get_tenant, tenant_id)
        connections = [
            row
            for row in tenant_connections(tenant_id, active_only=True)
            if not marketplace or row.marketplace == marketplace
        ]
        if not connections:
            fail("MARKETPLACE_NOT_CONNECTED: no active connection to pull")
        results = [pull_connection(connection) for connection in connections]
        print_rows(results, as_json, _pull_line)


def _connection_of(tenant_id, marketplace):
    call_service(get_tenant, tenant_id)
    for row in tenant_connections(tenant_id):
        if row.marketplace == marketplace:
            return row
    fail(f"CONNECTION_NOT_FOUND: {marketplace} is not connected for this tenant")


def _connection_line(row):
    pulled = row["last_pull_at"] or "never"
    return (
        f"{row['id']}  {row['marketplace']:20} {row['connector']:8} {row['status']:8} "
        f"last pull: {pulled} {row['last_pull_status'] or ''}"
    )


def _pull_line(result):
    line = (
        f"{result['marketplace']}: {result['status']}, {result['created']} new, "
        f"{result['updated']} updated, {result['unchanged']} unchanged, "
        f"{result['failed']} failed"
    )
    error = result.get("error")
    return f"{line} ({error['code']}: {error['message']})" if error else line
