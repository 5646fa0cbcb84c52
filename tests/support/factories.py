"""Factories: tenants, keys, auth headers, products."""

import itertools
import uuid

from commerce_api.auth.models import SCOPES
from commerce_api.auth.services import create_key, create_tenant

_counter = itertools.count(1)


def make_tenant(plan="starter", name=None):
    return create_tenant(name or f"Tenant {next(_counter)}", plan)


def make_key(tenant, scopes=SCOPES, **kwargs):
    """Create a key; returns ``(ApiKey, secret)``."""
    return create_key(tenant.id, kwargs.pop("name", "test key"), list(scopes), **kwargs)


def auth_headers(tenant, secret):
    return {"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant.id}


def headers_for(tenant=None, scopes=SCOPES, plan="starter", **kwargs):
    """A new key on ``tenant`` (or a new tenant) and its request headers."""
    tenant = tenant or make_tenant(plan)
    _, secret = make_key(tenant, scopes, **kwargs)
    return auth_headers(tenant, secret)


def product_body(sku=None, **overrides):
    body = {
        "sku": sku or f"SKU-{uuid.uuid4().hex[:10]}",
        "title": "Enamel mug",
        "description": "A mug.",
        "status": "active",
        "gtin": "4006381333931",
        "cost_price": 3.5,
        "weight_kg": 0.35,
        "images": ["https://img.example.com/mug.jpg"],
    }
    body.update(overrides)
    return body


def create_product(client, headers, **overrides):
    body = product_body(**overrides)
    response = client.post("/api/products", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def walk_pages(client, path, headers, **query):
    """The ids of every page of a list, following ``nextCursor`` to the end."""
    seen, cursor = [], None
    while True:
        params = {**query, **({"cursor": cursor} if cursor else {})}
        response = client.get(path, query_string=params, headers=headers)
        assert response.status_code == 200, response.get_json()
        seen += [item["id"] for item in response.get_json()["data"]]
        cursor = response.get_json()["meta"]["nextCursor"]
        if not cursor:
            return seen


def snapshot():
    """Every row of the tables a product, auth or CLI request can touch, as sorted JSON text.

    Compare a snapshot taken before a refused request with one taken after: equal means the
    request changed nothing (the event outbox and the job table included). A key's
    ``last_used_at`` is left out: using a key is not a change the request made.
    """
    import json

    from commerce_api.auth.models import ApiKey, Tenant
    from commerce_api.events.models import Event
    from commerce_api.jobs.models import Job
    from commerce_api.orders.models import Order, OrderLine
    from commerce_api.products.models import Listing, Product

    def rows(model):
        for row in model.select().dicts():
            row.pop("last_used_at", None)
            yield json.dumps(row, sort_keys=True, default=str)

    return {
        model._meta.table_name: sorted(rows(model))
        for model in (Tenant, ApiKey, Product, Listing, Order, OrderLine, Job, Event)
    }
