"""``commerce-api demo``: a demo tenant with a key, products, stock and orders (first run only)."""

import json
import os
from decimal import Decimal

import click
from flask import current_app
from flask.cli import with_appcontext
from stdnum import ean

from .analysis.demo import seed_demo_returns
from .analysis.demo_listings import seed_demo_listings
from .auth.models import SCOPES, Tenant
from .auth.services import create_key, create_tenant
from .db import db
from .inventory.demo import seed_demo_inventory
from .marketplaces.demo import DEMO_MARKETPLACE, seed_demo_marketplace
from .marketplaces.services import get_connection
from .migrations import upgrade
from .orders.pulls import pull_connection
from .pricing.demo import seed_demo_pricing
from .products.services import create_product

DEMO_PRODUCTS = (
    ("MUG-ENAMEL-WHT", "Enamel mug, white, 350 ml", "kitchen", "6.90"),
    ("MUG-ENAMEL-BLU", "Enamel mug, blue, 350 ml", "kitchen", "6.90"),
    ("TEA-TOWEL-LIN", "Linen tea towel", "kitchen", "4.20"),
    ("CANDLE-SOY-S", "Soy candle, small", "home", "3.10"),
    ("CANDLE-SOY-L", "Soy candle, large", "home", "5.80"),
    ("BLANKET-WOOL", "Wool blanket, 130 x 170 cm", "home", "38.00"),
    ("NOTEBOOK-A5", "Dot-grid notebook, A5", "stationery", "2.75"),
    ("PEN-BRASS", "Brass ballpoint pen", "stationery", "9.40"),
    ("TOTE-CANVAS", "Canvas tote bag", "bags", "3.60"),
    ("BOTTLE-STEEL", "Steel water bottle, 750 ml", "outdoor", "7.50"),
)


def _gtin(index):
    body = f"400638{index:06d}"
    return body + ean.calc_check_digit(body)


def credentials_path():
    """The CLI's instance folder is the SQLite database's folder (``cli._create_app``)."""
    return os.path.join(current_app.instance_path, "demo-credentials.json")


def _read_credentials(path):
    """The saved demo credentials, or None when the file is missing or not ours."""
    try:
        with open(path) as handle:
            saved = json.load(handle)
    except (OSError, ValueError):
        return None
    keys = ("tenant_id", "api_key", "key_id")
    if not isinstance(saved, dict) or not all(isinstance(saved.get(k), str) for k in keys):
        return None
    return saved


def seed_demo():
    """Create the demo tenant, key and catalogue once; return the saved credentials."""
    path = credentials_path()
    saved = _read_credentials(path)
    if saved and Tenant.get_or_none(Tenant.id == saved["tenant_id"]) is not None:
        return saved, False
    tenant = create_tenant("Demo Store", "growth")
    key, secret = create_key(tenant.id, "demo key", list(SCOPES))
    for index, (sku, title, category, cost) in enumerate(DEMO_PRODUCTS, start=1):
        create_product(
            tenant.id,
            {
                "sku": sku,
                "title": title,
                "status": "active",
                "category": category,
                "gtin": _gtin(index),
                "cost_price": Decimal(cost),  # as the API schema loads it
                "images": [f"https://images.example.com/{sku.lower()}.jpg"],
            },
        )
    seed_demo_listings(tenant.id)  # kitchen listings, one deliberately weak
    # the stock first: the sandbox's first orders reserve it
    seed_demo_inventory(tenant.id)
    connection = seed_demo_marketplace(tenant.id)
    # pull twice: a week of orders, then a tick in which the first ones move on (FBA
    # shipped by the marketplace, FBM confirmed)
    for _ in range(2):
        pull_connection(get_connection(tenant.id, connection.id))
    # the products listed there, competitors scanned, a few rules: recalculate has work
    seed_demo_pricing(tenant.id, DEMO_MARKETPLACE)
    seed_demo_returns(tenant.id)  # ten weeks of delivered orders with returns
    saved = {"tenant_id": tenant.id, "api_key": secret, "key_id": key.id}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
        json.dump(saved, handle)
    return saved, True


def register(cli):
    @cli.command("demo")
    @click.option("--json", "as_json", is_flag=True)
    @with_appcontext
    def demo_command(as_json):
        """Create or upgrade the schema, seed a demo tenant (first run only) and print its
        API key and tenant id."""
        with db.connection_context():
            upgrade(db.obj)  # a new folder has no schema yet: as init-db would
        saved, created = seed_demo()
        if as_json:
            click.echo(json.dumps(saved))
            return
        state = "created" if created else "already seeded"
        click.echo(
            f"Demo tenant {state}.\n"
            f"  tenant id: {saved['tenant_id']}\n"
            f"  API key:   {saved['api_key']}\n"
            "Try:\n"
            f'  curl -H "Authorization: Bearer {saved["api_key"]}" '
            f'-H "X-Tenant-ID: {saved["tenant_id"]}" http://127.0.0.1:8000/api/products'
        )
