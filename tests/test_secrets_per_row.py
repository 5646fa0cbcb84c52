"""Secrets are decrypted per row, where they are used (issue 31, first Medium).

One secret written under another key fails only its own webhook endpoint or marketplace
connection, visibly (``status_reason``, the delivery's or listing's error), and the loop
goes on for everyone else; once the row is repaired it works again without a restart. A
``COMMERCE_SECRET_KEY`` that reads none of the stored secrets is caught: readiness says
so, the worker refuses to start, no secret is written with it, lists that need no secret
still answer, ``marketplaces pull`` says what is wrong in one line.
"""

import threading

import pytest

from commerce_api.cli import cli
from commerce_api.marketplaces import gateway
from commerce_api.marketplaces.listing_push_loop import run_loop as push_loop
from commerce_api.marketplaces.product_sync import sync_product
from commerce_api.products.models import Listing
from commerce_api.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.support.factories import headers_for, make_tenant
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up
from tests.support.products_support import price_listing_now
from tests.support.waiting import wait_for
from tests.support.webhooks_support import Receiver, create_webhook, delivering, emit_events

GOOD, BAD = "the right key", "a key nobody has any more"


def use_keys(app, monkeypatch, setting):
    monkeypatch.setitem(app.config, "SECRET_KEY", setting)


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


@pytest.fixture
def keyed_app(app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_ALLOW_PRIVATE_TARGETS", True)
    monkeypatch.setitem(app.config, "WEBHOOK_RETRY_SCHEDULE", "0,0,0")
    use_keys(app, monkeypatch, GOOD)
    return app


def test_one_unreadable_webhook_secret_holds_back_only_its_endpoint(
    keyed_app, receiver, monkeypatch
):
    app, client = keyed_app, keyed_app.test_client()
    with app.app_context():
        good_tenant, bad_tenant = make_tenant(), make_tenant()
        good_headers, bad_headers = headers_for(good_tenant), headers_for(bad_tenant)
    create_webhook(client, good_headers, receiver.url + "/good")
    # written with a key the service is about to lose (the first key encrypts)
    use_keys(app, monkeypatch, f"{BAD},{GOOD}")
    bad = create_webhook(client, bad_headers, receiver.url + "/bad")
    use_keys(app, monkeypatch, GOOD)
    with app.app_context():
        # the unreadable endpoint's event first: a cross-tenant claim takes both at once
        emit_events(bad_tenant.id, [("order.created", "ord_b", {"n": 1})])
        emit_events(good_tenant.id, [("order.created", "ord_g", {"n": 2})])

    def paths():
        return [r["path"] for r in receiver.requests]

    with delivering(app):  # (it fails the test if the loop raised)
        assert wait_for(lambda: "/hooks/good" in paths(), timeout=20), paths()
        shown = client.get(f"/api/webhooks/{bad['id']}", headers=bad_headers)
        assert shown.status_code == 200
        assert shown.get_json()["data"]["status_reason"].startswith("SECRET_KEY_MISMATCH")
        listed = client.get("/api/webhooks", headers=bad_headers)
        assert listed.status_code == 200
        assert listed.get_json()["data"][0]["status_reason"].startswith("SECRET_KEY_MISMATCH")
        held = WebhookDelivery.get(WebhookDelivery.endpoint_id == bad["id"])
        assert (held.status, held.attempt_count) == ("pending", 0)  # no attempt spent
        assert "SECRET_KEY_MISMATCH" in held.last_error
        assert "/hooks/bad" not in paths()
        # repaired (a new secret): delivered by the same running loop
        rotated = client.post(f"/api/webhooks/{bad['id']}/rotate-secret", headers=bad_headers)
        assert rotated.status_code == 200, rotated.get_json()
        assert wait_for(lambda: "/hooks/bad" in paths(), timeout=20), paths()
        assert wait_for(
            lambda: WebhookEndpoint.get_by_id(bad["id"]).status_reason is None, timeout=10
        )


def push_pending(app):
    """One pass of the push service (what ``worker --once`` runs)."""
    stop = threading.Event()
    stop.set()
    with app.app_context():
        return push_loop(app.config, stop)


def listed_shop(app, client, marketplace, token):
    """A tenant with MUG-1 listed on the http marketplace, its connection's token ``token``."""
    with app.app_context():
        tenant = make_tenant()
        headers = headers_for(tenant)
    make_products(client, headers, "MUG-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10})
    with app.app_context():
        connect(tenant, "mirakl", "http", base_url=marketplace.url, api_token=token)
        price_listing_now(tenant.id, "MUG-1", "mirakl")  # nothing is pushed without a price
        assert sync_product(tenant.id, "MUG-1", ["mirakl"], created_by="test")["succeeded"] == 1
    return tenant, headers, warehouse


def set_stock(client, headers, warehouse, quantity):
    response = client.put(
        "/api/inventory/MUG-1",
        json={"warehouse_id": warehouse, "quantity": quantity, "reason": "cycle_count"},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()


def test_one_unreadable_token_fails_only_its_connection(keyed_app, monkeypatch):
    app, client = keyed_app, keyed_app.test_client()
    monkeypatch.setattr(gateway, "SECRET_RETRY_SECONDS", 0.2, raising=False)
    with ListingMarketplace() as good_mp, ListingMarketplace() as bad_mp:
        _, good_headers, good_wh = listed_shop(app, client, good_mp, "tok-good")
        use_keys(app, monkeypatch, f"{BAD},{GOOD}")
        bad_tenant, bad_headers, bad_wh = listed_shop(app, client, bad_mp, "tok-bad")
        use_keys(app, monkeypatch, GOOD)
        set_stock(client, bad_headers, bad_wh, 4)
        set_stock(client, good_headers, good_wh, 3)
        push_pending(app)
        assert good_mp.last_quantity("MUG-1") == 3
        assert bad_mp.last_quantity("MUG-1") == 10  # only its first sync got through
        bad_listing = Listing.get(Listing.tenant == bad_tenant.id)
        assert bad_listing.sync_status == "pending"
        assert "SECRET_KEY_MISMATCH" in (bad_listing.last_sync_error or "")
        connections = client.get("/api/marketplaces", headers=bad_headers)
        assert connections.status_code == 200
        (shown,) = connections.get_json()["data"]
        assert shown["status_reason"].startswith("SECRET_KEY_MISMATCH")
        assert shown["has_api_token"] is True
        # the key put back: the next pass pushes it, and the reason goes
        use_keys(app, monkeypatch, f"{GOOD},{BAD}")
        assert wait_for(
            lambda: push_pending(app) is not None and bad_mp.last_quantity("MUG-1") == 4,
            timeout=10,
            interval=0.3,
        )
        (shown,) = client.get("/api/marketplaces", headers=bad_headers).get_json()["data"]
        assert shown["status_reason"] is None
        assert bad_mp.pushes_of("MUG-1")[-1]["body"]["quantity"] == 4


def test_a_secret_key_that_reads_nothing(keyed_app, monkeypatch, receiver):
    app, client = keyed_app, keyed_app.test_client()
    with app.app_context():
        tenant = make_tenant()
        headers = headers_for(tenant)
    endpoint = create_webhook(client, headers, receiver.url)
    with app.app_context():
        connect(tenant, "mirakl", "http", base_url="http://127.0.0.1:9", api_token="tok")
    assert client.get("/api/health/ready").status_code == 200

    use_keys(app, monkeypatch, BAD)
    # lists that need no secret answer
    assert client.get("/api/webhooks", headers=headers).status_code == 200
    assert client.get(f"/api/webhooks/{endpoint['id']}", headers=headers).status_code == 200
    assert client.get("/api/marketplaces", headers=headers).status_code == 200
    ready = client.get("/api/health/ready")
    assert ready.status_code == 503
    assert ready.get_json()["checks"]["secrets"]["status"] == "unreadable"
    assert "COMMERCE_SECRET_KEY" in ready.get_json()["checks"]["secrets"]["error"]
    # nothing is written with it: a new secret is refused, and nothing changed
    before = WebhookEndpoint.get_by_id(endpoint["id"]).__data__
    for path in ("/api/webhooks", f"/api/webhooks/{endpoint['id']}/rotate-secret"):
        body = {"url": receiver.url, "events": ["*"]} if path == "/api/webhooks" else None
        refused = client.post(path, json=body, headers=headers)
        assert refused.status_code == 503, refused.get_json()
        assert refused.get_json()["error"]["code"] == "SECRET_KEY_MISMATCH"
    assert WebhookEndpoint.select().count() == 1
    assert WebhookEndpoint.get_by_id(endpoint["id"]).__data__ == before
    # an idempotent request is refused before it runs (its response would be stored)
    keyed = client.post(
        "/api/products",
        json={"sku": "K-1", "title": "Kettle"},
        headers={**headers, "Idempotency-Key": "k-1"},
    )
    assert keyed.status_code == 503
    assert client.get("/api/products/K-1", headers=headers).status_code == 404
    # the CLI: one clear line, no traceback
    runner = app.test_cli_runner()
    pulled = runner.invoke(cli, ["marketplaces", "pull", "--tenant", tenant.id])
    assert "SECRET_KEY_MISMATCH" in pulled.output, pulled.output
    assert (
        "Traceback" not in pulled.output
        and pulled.exception is None
        or isinstance(pulled.exception, SystemExit)
    )
    worker = runner.invoke(cli, ["worker", "--once"])
    assert worker.exit_code == 2, worker.output
    assert "SECRET_KEY_MISMATCH" in worker.output

    use_keys(app, monkeypatch, GOOD)
    assert client.get("/api/health/ready").status_code == 200
    assert create_webhook(client, headers, receiver.url)["secret"].startswith("whsec_")
