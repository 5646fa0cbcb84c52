"""The console's pages and actions through HTTP, as a browser posts them (DESIGN 15)."""

import json
import re

import pytest

from commerce_api.auth.models import ApiKey
from commerce_api.inventory.models import Adjustment
from commerce_api.orders.models import Order
from commerce_api.pricing.models import Recommendation
from tests.support import webhooks_support
from tests.support.console_support import csrf_of, post_form, sign_in
from tests.support.factories import auth_headers, make_key
from tests.support.jobs_support import run_worker
from tests.support.orders_support import (
    connect,
    import_orders,
    levels,
    make_own_warehouse,
    make_products,
    order_body,
    stock_up,
)
from tests.support.pricing_support import (
    create_rule,
    list_product,
    offer,
    recalculate,
    seed_offers,
)

receiver = webhooks_support.receiver  # the fixture
hooks_app = webhooks_support.hooks_app  # the fixture

PAGES = [
    "/console/",
    "/console/products",
    "/console/products?search=mug&status=active",
    "/console/products/MUG-1",
    "/console/products/MUG-1/listings",
    "/console/inventory",
    "/console/inventory?status=low",
    "/console/inventory/MUG-1",
    "/console/inventory/transfers",
    "/console/inventory/imports",
    "/console/listings?sync_status=error",
    "/console/orders",
    "/console/orders?status=pending",
    "/console/pricing",
    "/console/jobs",
    "/console/settings/api-keys",
    "/console/settings/notifications",
    "/console/settings/marketplaces",
]


@pytest.fixture
def shop(client, headers, tenant):
    """Products MUG-1 (10 on hand) and TOWEL-1 (5) in a warehouse, a quiet sandbox
    connection 'amazon'."""
    make_products(client, headers, "MUG-1", "TOWEL-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    return warehouse


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders(console, shop, path):
    answer = console.get(path)
    assert answer.status_code == 200, answer.text[:2000]
    assert 'role="alert"' not in answer.text  # no refusal on the page
    assert "text/html" in answer.headers["Content-Type"]


def test_a_missing_resource_shows_the_apis_404(console, shop):
    answer = console.get("/console/products/NOPE")
    assert answer.status_code == 404
    assert "PRODUCT_NOT_FOUND" in answer.text and "The product does not exist." in answer.text
    answer = console.get("/console/orders/ord_nope")
    assert answer.status_code == 404 and "ORDER_NOT_FOUND" in answer.text


def test_lists_page_with_the_apis_cursor(console, client, headers):
    make_products(client, headers, *[f"SKU-{n:03d}" for n in range(30)])
    first = console.get("/console/products")
    assert first.text.count('href="/console/products/SKU-') == 25
    cursor = re.search(r'href="/console/products\?cursor=([^"]+)" rel="next"', first.text)
    assert cursor, "no next page link"
    second = console.get(f"/console/products?cursor={cursor.group(1)}")
    assert second.text.count('href="/console/products/SKU-') == 5
    assert "30 in all" in second.text
    bad = console.get("/console/products?cursor=garbage")
    assert bad.status_code == 400 and "INVALID_CURSOR" in bad.text


def test_filters_reach_the_api(console, shop, client, headers):
    answer = console.get("/console/products?search=nothing-like-it")
    assert "No products match." in answer.text
    answer = console.get("/console/orders?status=bogus")
    assert answer.status_code == 422 and "VALIDATION_ERROR" in answer.text


def test_set_a_stock_level(console, shop, tenant):
    before = Adjustment.select().count()
    answer = post_form(
        console,
        "/console/inventory/MUG-1",
        "/console/inventory/MUG-1/set",
        {"warehouse_id": shop, "quantity": "42", "reason": "cycle_count", "note": "counted"},
    )
    assert answer.status_code == 303
    assert answer.headers["Location"] == "/console/inventory/MUG-1?notice=stock-set"
    assert levels(tenant.id, "MUG-1")[0] == 42
    assert Adjustment.select().count() == before + 1
    page = console.get(answer.headers["Location"])
    assert "The stock level is set." in page.text and "counted" in page.text


@pytest.mark.parametrize(
    "form, code",
    [
        ({"quantity": "-1", "reason": "cycle_count"}, "NEGATIVE_QUANTITY"),
        ({"quantity": "many", "reason": "cycle_count"}, "VALIDATION_ERROR"),
        ({"quantity": "5", "reason": "theft"}, "VALIDATION_ERROR"),
        ({"quantity": "5", "reason": "cycle_count", "warehouse_id": "wh_nope"}, None),
    ],
)
def test_a_refused_stock_level_changes_nothing(console, shop, tenant, form, code):
    before = Adjustment.select().count()
    form = {"warehouse_id": shop, **form}
    answer = post_form(console, "/console/inventory/MUG-1", "/console/inventory/MUG-1/set", form)
    assert 400 <= answer.status_code < 500
    assert 'role="alert"' in answer.text
    if code:
        assert code in answer.text
    assert levels(tenant.id, "MUG-1")[0] == 10
    assert Adjustment.select().count() == before


def _order(runner, tenant, tmp_path, **overrides):
    import_orders(runner, tenant, tmp_path, [order_body("EXT-1", **overrides)])
    return Order.get(Order.external_order_id == "EXT-1")


def test_ship_an_order(console, shop, runner, tenant, tmp_path):
    order = _order(runner, tenant, tmp_path)
    page = console.get(f"/console/orders/{order.id}")
    assert "Ada Lovelace" in page.text and "order_import" in page.text
    answer = post_form(
        console,
        f"/console/orders/{order.id}",
        f"/console/orders/{order.id}/ship",
        {"carrier": "UPS", "tracking_number": "1Z999"},
    )
    assert answer.status_code == 303, answer.text[:2000]
    assert Order.get_by_id(order.id).status == "shipped"
    page = console.get(answer.headers["Location"])
    assert "The shipment is confirmed." in page.text and "1Z999" in page.text
    again = post_form(
        console,
        f"/console/orders/{order.id}",
        f"/console/orders/{order.id}/ship",
        {"carrier": "UPS", "tracking_number": "1Z999"},
    )
    assert again.status_code == 409 and "ALREADY_SHIPPED" in again.text


def test_a_shipment_without_a_carrier_is_refused(console, shop, runner, tenant, tmp_path):
    order = _order(runner, tenant, tmp_path)
    answer = post_form(
        console,
        f"/console/orders/{order.id}",
        f"/console/orders/{order.id}/ship",
        {"tracking_number": "1Z999"},
    )
    assert answer.status_code == 422 and "carrier" in answer.text
    assert Order.get_by_id(order.id).status == "pending"


def test_cancel_an_order(console, shop, runner, tenant, tmp_path):
    order = _order(runner, tenant, tmp_path)
    answer = post_form(
        console,
        f"/console/orders/{order.id}",
        f"/console/orders/{order.id}/cancel",
        {"reason": "customer_request"},
    )
    assert answer.status_code == 303, answer.text[:2000]
    page = console.get(answer.headers["Location"])
    assert "The cancellation is requested" in page.text
    assert "<h2>Cancellation</h2>" in page.text


def test_push_now_queues_the_listings(console, shop):
    answer = post_form(console, "/console/products/MUG-1", "/console/products/MUG-1/push")
    assert answer.status_code == 303, answer.text[:2000]
    assert "notice=pushed" in answer.headers["Location"]


def test_apply_and_dismiss_recommendations(console, client, headers, app, tenant, shop):
    for index, sku in enumerate(("MUG-1", "TOWEL-1"), start=1):
        list_product(tenant, sku, "amazon", f"{20 + index}.00")
        seed_offers(tenant, "amazon", [offer(sku, "A", f"{15 + index}.00")])
    create_rule(client, headers, type="competitor_match", value=0)
    recalculate(client, headers, app, marketplace="amazon")
    recs = {r.sku: r for r in Recommendation.select()}
    page = console.get("/console/pricing")
    assert page.text.count(">Apply</button>") == 2
    apply = f"/console/pricing/recommendations/{recs['MUG-1'].id}/apply"
    answer = post_form(console, "/console/pricing", apply)
    assert answer.status_code == 303, answer.text[:2000]
    assert Recommendation.get_by_id(recs["MUG-1"].id).status == "applied"
    dismiss = f"/console/pricing/recommendations/{recs['TOWEL-1'].id}/dismiss"
    assert post_form(console, "/console/pricing", dismiss).status_code == 303
    assert Recommendation.get_by_id(recs["TOWEL-1"].id).status == "dismissed"
    again = post_form(console, "/console/pricing", apply)
    assert again.status_code == 409 and "RECOMMENDATION_ALREADY_APPLIED" in again.text


def test_dispatch_a_job_watch_it_and_read_its_result(console, app):
    result = {
        "summary": "<b>3 of 4</b> reviews positive",
        "items": [{"sku": "MUG-1", "score": 0.8}, {"sku": "<script>x</script>", "score": -0.2}],
    }
    params = json.dumps({"result": result})
    answer = post_form(
        console, "/console/jobs", "/console/jobs", {"type": "test_task", "params": params}
    )
    assert answer.status_code == 303, answer.text[:2000]
    page = console.get(answer.headers["Location"])
    assert page.status_code == 200 and 'data-testid="job-status">queued' in page.text
    assert 'hx-trigger="every 2s"' in page.text  # polled until it finishes
    job_id = answer.headers["Location"].split("/console/jobs/")[1].split("?")[0]
    run_worker(app, concurrency=1)
    fragment = console.get(f"/console/jobs/{job_id}/progress")
    assert fragment.status_code == 200 and "<html" not in fragment.text
    assert 'data-testid="job-status">completed' in fragment.text
    assert "hx-trigger" not in fragment.text  # finished: the polling stops
    # the result as a person reads it: a definition list and a table, every value escaped
    assert "<dt>summary</dt>" in fragment.text and '<th scope="col">score</th>' in fragment.text
    assert "&lt;b&gt;3 of 4&lt;/b&gt;" in fragment.text and "<script>x" not in fragment.text


def test_job_parameters_that_are_not_json_are_refused(console):
    answer = post_form(
        console, "/console/jobs", "/console/jobs", {"type": "review_sentiment", "params": "{"}
    )
    assert answer.status_code == 422 and "params" in answer.text


def test_create_a_narrow_key_and_see_its_secret_once(console, app, tenant):
    answer = post_form(
        console,
        "/console/settings/api-keys",
        "/console/settings/api-keys",
        {"name": "reader", "scopes": ["products:read"]},
    )
    assert answer.status_code == 201
    secret = re.search(r'value="(ck_[A-Za-z0-9_-]+)"', answer.text).group(1)
    assert answer.headers["Cache-Control"] == "no-store"
    key = ApiKey.get(ApiKey.name == "reader")
    assert key.scopes == "products:read"
    # the secret works against the API, and no later page shows it again
    client = app.test_client()
    assert client.get("/api/products", headers=auth_headers(tenant, secret)).status_code == 200
    assert secret not in console.get("/console/settings/api-keys").text
    # narrow the signed-in key's neighbour and revoke it
    narrowed = post_form(
        console,
        "/console/settings/api-keys",
        f"/console/settings/api-keys/{key.id}/scopes",
        {"scopes": []},
    )
    assert narrowed.status_code == 422  # a key keeps at least one scope (the API's rule)
    revoked = post_form(
        console, "/console/settings/api-keys", f"/console/settings/api-keys/{key.id}/revoke"
    )
    assert revoked.status_code == 303
    assert ApiKey.get_by_id(key.id).revoked_at is not None


def test_a_key_cannot_widen_itself_through_the_console(app, tenant):
    client = app.test_client()
    key, secret = make_key(tenant, scopes=["api-keys:read", "api-keys:write"])
    sign_in(client, secret)
    answer = post_form(
        client,
        "/console/settings/api-keys",
        "/console/settings/api-keys",
        {"name": "wider", "scopes": ["orders:write"]},
    )
    assert answer.status_code == 403 and "SCOPE_ESCALATION" in answer.text
    assert not ApiKey.select().where(ApiKey.name == "wider").exists()


def test_revoking_the_signed_in_key_needs_confirmation(app, tenant):
    client = app.test_client()
    key, secret = make_key(tenant)
    sign_in(client, secret)
    path = f"/console/settings/api-keys/{key.id}/revoke"
    answer = post_form(client, "/console/settings/api-keys", path)
    assert answer.status_code == 409 and "CONFIRMATION_REQUIRED" in answer.text
    answer = post_form(client, "/console/settings/api-keys", path, {"confirm_self": "1"})
    assert answer.status_code == 303
    assert client.get("/console/").status_code == 303  # signed out with it


def test_webhook_endpoint_secret_once_test_and_delivery_with_its_body(console, hooks_app, receiver):
    answer = post_form(
        console,
        "/console/settings/notifications",
        "/console/settings/notifications",
        {"url": receiver.url, "events": ["order.shipped"], "description": "ops"},
    )
    assert answer.status_code == 201, answer.text[:2000]
    secret = re.search(r'value="(whsec_[^"]+)"', answer.text).group(1)
    webhook_id = re.search(r"/console/settings/notifications/(whk_[0-9A-Z]+)/test", answer.text)
    webhook_id = webhook_id.group(1)
    page_path = f"/console/settings/notifications/{webhook_id}"
    assert secret not in console.get(page_path).text
    tested = post_form(console, page_path, f"{page_path}/test")
    assert tested.status_code == 303
    webhooks_support.deliver(hooks_app)
    page = console.get(page_path)
    assert 'data-testid="delivery-status">succeeded' in page.text
    link = re.search(rf"{page_path}/deliveries/(dlv_[0-9A-Z]+)", page.text).group(0)
    delivery = console.get(link)
    assert delivery.status_code == 200
    assert "webhook.test" in delivery.text and 'data-testid="delivery-body"' in delivery.text
    assert len(receiver.bodies()) == 1
    rotated = post_form(console, page_path, f"{page_path}/rotate-secret")
    assert rotated.status_code == 200
    new_secret = re.search(r'value="(whsec_[^"]+)"', rotated.text).group(1)
    assert new_secret != secret
    redeliver = post_form(console, link, f"{link}/redeliver")
    assert redeliver.status_code == 303
    disabled = post_form(console, page_path, f"{page_path}/active", {"is_active": "false"})
    assert disabled.status_code == 303 and "notice=disabled" in disabled.headers["Location"]


def test_a_webhook_to_a_private_address_is_refused(console):
    answer = post_form(
        console,
        "/console/settings/notifications",
        "/console/settings/notifications",
        {"url": "http://127.0.0.1:9/hook", "events": ["order.shipped"]},
    )
    assert answer.status_code == 422 and "WEBHOOK_URL_NOT_ALLOWED" in answer.text


def test_connect_check_and_disable_a_marketplace(console):
    answer = post_form(
        console,
        "/console/settings/marketplaces",
        "/console/settings/marketplaces",
        {"marketplace": "ebay", "connector": "sandbox"},
    )
    assert answer.status_code == 303, answer.text[:2000]
    page = console.get(answer.headers["Location"])
    assert page.status_code == 200 and "ebay" in page.text and "active" in page.text
    connection = answer.headers["Location"].split("/marketplaces/")[1].split("?")[0]
    path = f"/console/settings/marketplaces/{connection}"
    disabled = post_form(console, path, f"{path}/status", {"status": "disabled"})
    assert disabled.status_code == 303
    assert "<dt>Status</dt><dd>disabled</dd>" in console.get(path).text
    again = post_form(
        console,
        "/console/settings/marketplaces",
        "/console/settings/marketplaces",
        {"marketplace": "ebay", "connector": "sandbox"},
    )
    assert again.status_code == 409 and "MARKETPLACE_ALREADY_CONNECTED" in again.text


def test_csrf_token_of_another_session_is_refused(console, app, tenant, shop):
    other = app.test_client()
    _, secret = make_key(tenant)
    sign_in(other, secret)
    foreign = csrf_of(other.get("/console/").text)
    answer = console.post(
        "/console/inventory/MUG-1/set",
        data={"warehouse_id": shop, "quantity": "1", "reason": "cycle_count"}
        | {"csrf_token": foreign},
    )
    assert answer.status_code == 403 and "CSRF_TOKEN_INVALID" in answer.text
    assert levels(tenant.id, "MUG-1")[0] == 10


def test_an_unknown_console_path_is_a_404_page(console):
    answer = console.get("/console/no/such/page")
    assert answer.status_code == 404 and "RESOURCE_NOT_FOUND" in answer.text
    assert "text/html" in answer.headers["Content-Type"]


def test_a_bug_is_a_page_without_internals(console, monkeypatch):
    from commerce_api.console import gateway

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(gateway, "call", broken)
    monkeypatch.setitem(console.application.config, "PROPAGATE_EXCEPTIONS", False)
    answer = console.get("/console/products")
    assert answer.status_code == 500 and "INTERNAL_ERROR" in answer.text
    assert "secret internals" not in answer.text and "text/html" in answer.headers["Content-Type"]


def test_a_credential_no_key_decrypts_is_the_apis_503(console, monkeypatch):
    from commerce_api import crypto

    def unreadable(stored, **options):
        raise crypto.SecretUnreadable("A stored secret cannot be decrypted.")

    monkeypatch.setattr(crypto, "decrypt", unreadable)
    answer = console.get("/console/products")
    assert answer.status_code == 503 and "SECRET_KEY_MISMATCH" in answer.text


def test_set_the_safety_stock(console, shop, client, headers):
    page = "/console/inventory/MUG-1"
    answer = post_form(console, page, f"{page}/safety-stock", {"safety_stock": "12"})
    assert answer.status_code == 303, answer.text[:2000]
    data = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    assert data["safety_stock"] == 12 and data["status"] == "low"
    refused = post_form(console, page, f"{page}/safety-stock", {"safety_stock": "-3"})
    assert refused.status_code == 422 and "safety_stock" in refused.text
    assert (
        client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]["safety_stock"] == 12
    )
