"""What the console must never do: run a payload, show another tenant's data, or let a key
do through a page what it may not do through the API."""

import re

import pytest

from commerce_api.db import write_transaction
from commerce_api.ids import new_id
from commerce_api.marketplaces.models import SyncAttempt
from commerce_api.orders.models import Order
from commerce_api.products.models import Listing
from tests.support import webhooks_support
from tests.support.console_support import post_form, sign_in
from tests.support.factories import auth_headers, make_key, make_tenant
from tests.support.orders_support import (
    connect,
    import_orders,
    make_own_warehouse,
    make_products,
    order_body,
    stock_up,
)
from tests.support.pricing_support import list_product
from tests.support.transfer_helpers import make_transfer

PAYLOADS = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "<svg/onload=alert(3)>",
    "javascript:alert(4)//</textarea></title>",
)


def _escaped(text, payload):
    """The payload appears only escaped: no raw tag of it reaches the page."""
    raw = payload.replace("javascript:alert(4)//", "")
    return raw not in text


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_in_every_rendered_field_come_back_escaped(
    console, client, headers, tenant, runner, tmp_path, payload
):
    sku = "XSS-1"
    make_products(client, headers, "MUG-1", "TOWEL-1")
    product = client.post(
        "/api/products",
        json={
            "sku": sku,
            "title": payload,
            "description": payload,
            "category": payload[:50],
            "status": "active",
        },
        headers=headers,
    )
    assert product.status_code == 201, product.get_json()
    warehouse = make_own_warehouse(tenant, name=payload)
    stock_up(tenant, warehouse, {sku: 3, "MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    listing = list_product(tenant, sku, "amazon", "9.00")
    with write_transaction():
        Listing.update(sync_status="failed", last_sync_error=payload).where(
            Listing.id == listing.id
        ).execute()
        SyncAttempt.create(
            id=new_id("sync"),
            tenant=tenant.id,
            marketplace="amazon",
            resource_type="product",
            resource_id=product.get_json()["data"]["id"],
            sku=sku,
            operation="product_push",
            status="failed",
            error_code="MARKETPLACE_REJECTION",
            error_message=payload,
        )
    address = {
        "name": payload,
        "line1": payload,
        "line2": payload,
        "city": payload,
        "region": "R",
        "postal_code": "1",
        "country": "GB",
    }
    import_orders(runner, tenant, tmp_path, [order_body("EXT-X", shipping_address=address)])
    order = Order.get(Order.external_order_id == "EXT-X")
    client.put(
        f"/api/inventory/{sku}",
        json={"warehouse_id": warehouse, "quantity": 4, "reason": "correction", "note": payload},
        headers=headers,
    )
    client.post(
        "/api/pricing/rules",
        json={"name": payload, "type": "floor", "value": 5, "value_type": "percent"},
        headers=headers,
    )
    make_key(tenant, name=payload.replace("\n", " ")[:200])
    pages = [
        "/console/",
        "/console/products",
        f"/console/products/{sku}",
        f"/console/products/{sku}/listings",
        "/console/inventory",
        f"/console/inventory/{sku}",
        "/console/orders",
        f"/console/orders/{order.id}",
        "/console/pricing",
        "/console/settings/api-keys",
        f"/console/products?search={payload}",
    ]
    for path in pages:
        page = console.get(path)
        assert page.status_code == 200, (path, page.text[:1000])
        assert _escaped(page.text, payload), path
    # the payload is on the pages, as text
    assert "&lt;" in console.get(f"/console/products/{sku}").text


def test_a_webhook_description_and_a_refused_value_are_escaped(console):
    payload = PAYLOADS[1]
    answer = post_form(
        console,
        "/console/settings/notifications",
        "/console/settings/notifications",
        {"url": "https://hooks.example.com/" + payload, "events": ["*"], "description": payload},
    )
    assert _escaped(answer.text, payload)


def test_a_session_for_tenant_a_never_shows_tenant_b(app, client, headers, tenant):
    make_products(client, headers, "A-ONLY")
    other = make_tenant()
    _, other_secret = make_key(other)
    other_headers = auth_headers(other, other_secret)
    make_products(client, other_headers, "B-ONLY")
    b_product = client.get("/api/products/B-ONLY", headers=other_headers).get_json()["data"]
    browser = app.test_client()
    _, secret = make_key(tenant)
    sign_in(browser, secret)
    listing = browser.get("/console/products").text
    assert "A-ONLY" in listing and "B-ONLY" not in listing
    answer = browser.get("/console/products/B-ONLY")
    assert answer.status_code == 404 and "PRODUCT_NOT_FOUND" in answer.text
    assert b_product["id"] not in answer.text
    # the other tenant's session, with its cookie, shows only its own
    browser_b = app.test_client()
    sign_in(browser_b, other_secret)
    assert "B-ONLY" in browser_b.get("/console/products").text
    assert "A-ONLY" not in browser_b.get("/console/products").text
    # tenant B's cookie in tenant A's browser is tenant B's session: never both
    cookie_b = browser_b.get_cookie("console_session", path="/console").value
    browser.set_cookie("console_session", cookie_b, path="/console")
    mixed = browser.get("/console/products").text
    assert "A-ONLY" not in mixed


def test_a_key_without_orders_write_cannot_ship(app, client, headers, tenant, runner, tmp_path):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    import_orders(runner, tenant, tmp_path, [order_body("EXT-1")])
    order = Order.get(Order.external_order_id == "EXT-1")
    browser = app.test_client()
    _, secret = make_key(tenant, scopes=["orders:read"])
    sign_in(browser, secret)
    page = f"/console/orders/{order.id}"
    assert browser.get(page).status_code == 200
    answer = post_form(browser, page, f"{page}/ship", {"carrier": "UPS", "tracking_number": "1Z9"})
    assert answer.status_code == 403
    assert "INSUFFICIENT_SCOPE" in answer.text and "orders:write" in answer.text
    assert Order.get_by_id(order.id).status == "pending"
    cancel = post_form(browser, page, f"{page}/cancel", {"reason": "other"})
    assert cancel.status_code == 403 and Order.get_by_id(order.id).status == "pending"


@pytest.mark.parametrize(
    "path, scope",
    [
        ("/console/products", "products:read"),
        ("/console/inventory", "inventory:read"),
        ("/console/inventory/transfers", "inventory:read"),
        ("/console/listings", "products:read"),
        ("/console/pricing", "pricing:read"),
        ("/console/settings/api-keys", "api-keys:read"),
        ("/console/settings/notifications", "webhooks:read"),
        ("/console/settings/marketplaces", "marketplaces:read"),
    ],
)
def test_a_page_says_which_scope_is_missing(app, tenant, path, scope):
    browser = app.test_client()
    _, secret = make_key(tenant, scopes=["orders:read"])
    sign_in(browser, secret)
    answer = browser.get(path)
    assert answer.status_code == 403
    assert "INSUFFICIENT_SCOPE" in answer.text and f"<code>{scope}</code>" in answer.text


def test_the_overview_of_a_narrow_key_shows_what_it_may_see(app, tenant):
    browser = app.test_client()
    _, secret = make_key(tenant, scopes=["orders:read"])
    sign_in(browser, secret)
    answer = browser.get("/console/")
    assert answer.status_code == 200
    assert "marketplaces:read" in answer.text  # the sections it cannot see say why


def test_console_pages_count_against_the_keys_rate_limit(app, make_app):
    """The console is a client of the API like any other: its calls spend the key's
    allowance, and over it the page shows the API's 429."""
    from commerce_api.http.ratelimit_slots import SlotFileCounter

    limited = make_app(RATE_LIMIT_ENABLED=True)
    limiter = limited.extensions["commerce"]["rate_limiter"]
    limiter.clock = lambda: 1_900_000_805  # mid-minute, far from the real clock
    if isinstance(limiter.counter, SlotFileCounter):
        limiter.counter.clear()
    tenant = make_tenant("enterprise")
    _, secret = make_key(tenant, rate_limit_per_minute=3, rate_limit_per_hour=100)
    browser = limited.test_client()
    assert sign_in(browser, secret).status_code == 303
    for _ in range(3):  # the products page makes one API call
        assert browser.get("/console/products").status_code == 200
    answer = browser.get("/console/products")
    assert answer.status_code == 429 and "RATE_LIMITED" in answer.text


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_in_the_new_inventory_and_delivery_fields_come_back_escaped(
    console, client, headers, tenant, payload
):
    """Transfer references, bundle titles and components, a refused listing's error on the
    Overview, warehouse names on transfers and allocation forms (issue 36)."""
    make_products(client, headers, "MUG-1")
    bundle = client.post(
        "/api/products",
        json={"sku": "GIFT-1", "title": payload, "components": [{"sku": "MUG-1", "quantity": 2}]},
        headers=headers,
    )
    assert bundle.status_code == 201, bundle.get_json()
    main = make_own_warehouse(tenant, name=payload)
    spare = make_own_warehouse(tenant, name="Spare " + payload)
    stock_up(tenant, main, {"MUG-1": 10})
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    listing = list_product(tenant, "MUG-1", "amazon", "9.00")
    with write_transaction():
        Listing.update(sync_status="error", last_sync_error=payload).where(
            Listing.id == listing.id
        ).execute()
    transfer = make_transfer(
        client, headers, main, spare, [{"sku": "MUG-1", "quantity": 1}], reference=payload[:200]
    )
    pages = [
        "/console/",
        "/console/listings?sync_status=error",
        "/console/inventory/transfers",
        f"/console/inventory/transfers/{transfer['id']}",
        "/console/inventory/MUG-1",
        "/console/products/MUG-1",
        "/console/products/GIFT-1",
        "/console/inventory/GIFT-1",
    ]
    for path in pages:
        page = console.get(path)
        assert page.status_code == 200, (path, page.text[:1000])
        assert _escaped(page.text, payload), path
    assert "&lt;" in console.get(f"/console/inventory/transfers/{transfer['id']}").text
    assert "&lt;" in console.get("/console/").text


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_receivers_answer_is_shown_escaped(console, app, monkeypatch, payload):
    monkeypatch.setitem(app.config, "WEBHOOK_ALLOW_PRIVATE_TARGETS", True)
    monkeypatch.setitem(app.config, "WEBHOOK_RETRY_SCHEDULE", "0")

    def respond(record):
        return 500, {"Content-Type": "text/html"}, payload.encode()

    with webhooks_support.Receiver(respond=respond) as receiver:
        created = post_form(
            console,
            "/console/settings/notifications",
            "/console/settings/notifications",
            {"url": receiver.url, "events": ["order.shipped"]},
        )
        webhook_id = re.search(r"notifications/(whk_[0-9A-Z]+)/test", created.text).group(1)
        path = f"/console/settings/notifications/{webhook_id}"
        post_form(console, path, f"{path}/test")
        webhooks_support.deliver(app)
    link = re.search(rf"{path}/deliveries/(dlv_[0-9A-Z]+)", console.get(path).text).group(0)
    page = console.get(link)
    assert page.status_code == 200
    assert 'data-testid="response-body-1"' in page.text
    assert _escaped(page.text, payload)
    assert "&lt;" in page.text
