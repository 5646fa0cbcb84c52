"""The console's inventory pages that came with DESIGN 14 (transfers, relative adjustments,
a listing's allocation, bundles), the Overview's pending and failed listings and the
delivery log's response bodies, through HTTP as a browser posts them (issue 36)."""

import io
import re

import pytest

from commerce_api.db import write_transaction
from commerce_api.inventory.models import Adjustment
from commerce_api.products.models import Listing
from commerce_api.transfers.models import Transfer
from tests.support import webhooks_support
from tests.support.console_support import csrf_of, post_form, sign_in
from tests.support.factories import make_key
from tests.support.jobs_support import run_worker
from tests.support.orders_support import (
    connect,
    levels,
    make_own_warehouse,
    make_products,
    stock_up,
)
from tests.support.pricing_support import list_product

hooks_app = webhooks_support.hooks_app  # the fixture

TRANSFERS = "/console/inventory/transfers"


@pytest.fixture
def shop(client, headers, tenant):
    """MUG-1 (10) and TOWEL-1 (5) in Main, an empty Spare warehouse, MUG-1 on amazon."""
    make_products(client, headers, "MUG-1", "TOWEL-1")
    main = make_own_warehouse(tenant, name="Main")
    spare = make_own_warehouse(tenant, name="Spare")
    stock_up(tenant, main, {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    list_product(tenant, "MUG-1", "amazon", "21.00", quantity=10)
    return {"main": main, "spare": spare}


def _stock(tenant, sku, warehouse):
    from commerce_api.inventory.models import Stock

    row = Stock.get_or_none(
        (Stock.tenant == tenant.id) & (Stock.sku == sku) & (Stock.warehouse == warehouse)
    )
    return (row.on_hand, row.incoming) if row else (0, 0)


def _draft(console, shop, lines, reference="PO-7"):
    form = {"from_warehouse_id": shop["main"], "to_warehouse_id": shop["spare"]}
    form["reference"] = reference
    for n, (sku, quantity) in enumerate(lines):
        form[f"sku_{n}"], form[f"quantity_{n}"] = sku, str(quantity)
    for n in range(len(lines), 5):
        form[f"sku_{n}"] = form[f"quantity_{n}"] = ""
    return post_form(console, TRANSFERS, TRANSFERS, form)


@pytest.mark.parametrize(
    "path",
    [
        TRANSFERS,
        f"{TRANSFERS}?status=draft",
        f"{TRANSFERS}?sku=MUG-1",
        "/console/listings",
        "/console/listings?sync_status=error",
    ],
)
def test_the_new_pages_render(console, shop, path):
    answer = console.get(path)
    assert answer.status_code == 200, answer.text[:2000]
    assert 'role="alert"' not in answer.text


def test_draft_ship_and_receive_a_transfer_partly_then_whole(console, shop, tenant):
    answer = _draft(console, shop, [("MUG-1", 6), ("TOWEL-1", 2)])
    assert answer.status_code == 303, answer.text[:2000]
    page_path = answer.headers["Location"].split("?")[0]
    transfer_id = page_path.rsplit("/", 1)[1]
    page = console.get(answer.headers["Location"])
    assert "The transfer is drafted." in page.text and "PO-7" in page.text
    assert 'data-testid="transfer-status">draft' in page.text
    listed = console.get(f"{TRANSFERS}?status=draft")
    assert transfer_id in listed.text

    shipped = post_form(console, page_path, f"{page_path}/ship")
    assert shipped.status_code == 303
    assert _stock(tenant, "MUG-1", shop["main"])[0] == 4
    assert _stock(tenant, "MUG-1", shop["spare"]) == (0, 6)
    stock_page = console.get("/console/inventory/MUG-1")
    assert f'data-testid="incoming-{shop["spare"]}">6' in stock_page.text
    assert transfer_id in stock_page.text  # the ledger's transfer_out links the transfer

    # part of one line: 4 of 6 mugs
    partly = post_form(
        console,
        page_path,
        f"{page_path}/receive",
        {"sku": ["MUG-1", "TOWEL-1"], "receive_MUG-1": "4"},
    )
    assert partly.status_code == 303, partly.text[:2000]
    assert _stock(tenant, "MUG-1", shop["spare"]) == (4, 2)
    page = console.get(page_path)
    assert 'data-testid="received-MUG-1">4' in page.text
    assert 'data-testid="transfer-status">in transit' in page.text
    # too many: the API's refusal, nothing changed
    refused = post_form(
        console, page_path, f"{page_path}/receive", {"sku": ["MUG-1"], "receive_MUG-1": "9"}
    )
    assert refused.status_code in (409, 422), refused.status_code
    assert "RECEIPT_EXCEEDS_SHIPPED" in refused.text
    assert _stock(tenant, "MUG-1", shop["spare"]) == (4, 2)
    # the rest, whole
    whole = post_form(console, page_path, f"{page_path}/receive", {"whole": "1"})
    assert whole.status_code == 303
    assert _stock(tenant, "MUG-1", shop["spare"]) == (6, 0)
    assert _stock(tenant, "TOWEL-1", shop["spare"]) == (2, 0)
    assert Transfer.get_by_id(transfer_id).status == "received"
    page = console.get(page_path)
    assert "Receive everything" not in page.text and "Cancel the transfer" not in page.text


def test_cancel_in_transit_returns_the_stock(console, shop, tenant):
    answer = _draft(console, shop, [("MUG-1", 3)])
    page_path = answer.headers["Location"].split("?")[0]
    post_form(console, page_path, f"{page_path}/ship")
    cancelled = post_form(console, page_path, f"{page_path}/cancel")
    assert cancelled.status_code == 303
    assert _stock(tenant, "MUG-1", shop["main"])[0] == 10
    assert _stock(tenant, "MUG-1", shop["spare"]) == (0, 0)
    again = post_form(console, page_path, f"{page_path}/cancel")
    assert again.status_code == 409 and "INVALID_TRANSFER_STATUS" in again.text


@pytest.mark.parametrize(
    "lines, code",
    [
        ([], "VALIDATION_ERROR"),
        ([("MUG-1", "many")], "VALIDATION_ERROR"),
        ([("NO-SUCH", 1)], "PRODUCT_NOT_FOUND"),
        ([("MUG-1", 1), ("MUG-1", 2)], "VALIDATION_ERROR"),
    ],
)
def test_a_refused_transfer_creates_nothing(console, shop, lines, code):
    answer = _draft(console, shop, lines)
    assert 400 <= answer.status_code < 500 and code in answer.text, answer.text[:1500]
    assert Transfer.select().count() == 0
    # what was typed stays in the form
    if lines:
        assert f'value="{lines[0][0]}"' in answer.text


def test_a_transfer_to_the_same_warehouse_is_refused(console, shop):
    form = {"from_warehouse_id": shop["main"], "to_warehouse_id": shop["main"]}
    answer = post_form(console, TRANSFERS, TRANSFERS, {**form, "sku_0": "MUG-1", "quantity_0": "1"})
    assert answer.status_code == 422 and "SAME_WAREHOUSE_TRANSFER" in answer.text
    assert Transfer.select().count() == 0


def test_a_key_without_inventory_write_cannot_ship(app, shop, tenant, console):
    answer = _draft(console, shop, [("MUG-1", 2)])
    page_path = answer.headers["Location"].split("?")[0]
    reader = app.test_client()
    _, secret = make_key(tenant, scopes=["inventory:read"])
    sign_in(reader, secret)
    refused = post_form(reader, page_path, f"{page_path}/ship")
    assert refused.status_code == 403 and "inventory:write" in refused.text
    assert _stock(tenant, "MUG-1", shop["main"])[0] == 10


def test_adjust_the_stock_by_a_delta(console, shop, tenant):
    before = Adjustment.select().count()
    form = {"warehouse_id": shop["main"], "delta": "-3", "reason": "damage", "note": "dropped"}
    answer = post_form(console, "/console/inventory/MUG-1", "/console/inventory/MUG-1/adjust", form)
    assert answer.status_code == 303
    assert answer.headers["Location"] == "/console/inventory/MUG-1?notice=stock-adjusted"
    assert levels(tenant.id, "MUG-1")[0] == 7
    assert Adjustment.select().count() == before + 1
    page = console.get(answer.headers["Location"])
    assert "The stock level is adjusted." in page.text
    assert "-3 on hand" in page.text and "dropped" in page.text  # the ledger shows it
    too_many = {**form, "delta": "-50"}
    refused = post_form(
        console, "/console/inventory/MUG-1", "/console/inventory/MUG-1/adjust", too_many
    )
    assert refused.status_code == 422 and "NEGATIVE_QUANTITY" in refused.text
    assert levels(tenant.id, "MUG-1")[0] == 7


def _listing():
    return Listing.get(Listing.marketplace == "amazon")


def _allocation(shop, **fields):
    form = {"stock_buffer": "0", "allocation_pct": "100", "max_quantity": "", "fixed_quantity": ""}
    return {**form, **fields}


def test_set_an_allocation_cap_and_the_listing_goes_pending(console, shop):
    path = "/console/products/MUG-1"
    action = f"{path}/listings/amazon"
    answer = post_form(
        console, path, action, _allocation(shop, max_quantity="4", warehouse_ids=[shop["main"]])
    )
    assert answer.status_code == 303, answer.text[:2000]
    listing = _listing()
    assert listing.max_quantity == 4 and listing.warehouse_ids == [shop["main"]]
    assert listing.sync_status == "pending"
    page = console.get(answer.headers["Location"])
    assert "The listing is changed" in page.text
    assert 'data-testid="allocation-amazon">100 %, at most 4, 1 warehouse(s)' in page.text
    assert 'data-testid="sync-amazon">pending' in page.text
    # blank cap and no warehouse ticked: no cap, every warehouse
    cleared = post_form(console, path, action, _allocation(shop, allocation_pct="60"))
    assert cleared.status_code == 303
    listing = _listing()
    assert (listing.max_quantity, listing.allocation_pct, listing.warehouse_ids) == (None, 60, None)


@pytest.mark.parametrize(
    "fields, code",
    [
        ({"max_quantity": "4", "fixed_quantity": "2"}, "INVALID_ALLOCATION"),
        ({"allocation_pct": "0"}, "VALIDATION_ERROR"),
        ({"allocation_pct": "lots"}, "VALIDATION_ERROR"),
        ({"warehouse_ids": ["wh_nope"]}, "WAREHOUSE_NOT_FOUND"),
    ],
)
def test_a_refused_allocation_changes_nothing(console, shop, fields, code):
    path = "/console/products/MUG-1"
    answer = post_form(console, path, f"{path}/listings/amazon", _allocation(shop, **fields))
    assert 400 <= answer.status_code < 500 and code in answer.text, answer.text[:1500]
    listing = _listing()
    assert (listing.max_quantity, listing.fixed_quantity, listing.allocation_pct) == (
        None,
        None,
        100,
    )
    assert listing.sync_status == "in_sync"


def test_make_a_bundle_and_see_its_derived_availability(console, shop, client, headers):
    make_products(client, headers, "GIFT-1")
    path = "/console/products/GIFT-1"
    assert "Make it a bundle" in console.get(path).text
    form = {"component_sku_0": "MUG-1", "component_quantity_0": "3"}
    form.update({f"component_{name}_{n}": "" for name in ("sku", "quantity") for n in (1, 2)})
    answer = post_form(console, path, f"{path}/components", form)
    assert answer.status_code == 303, answer.text[:2000]
    page = console.get(answer.headers["Location"])
    assert "components are set." in page.text and "Bundle components" in page.text
    assert 'data-testid="bundle-available">3<' in page.text  # 10 mugs, 3 a bundle
    refused = post_form(
        console,
        path,
        f"{path}/components",
        {"component_sku_0": "GIFT-1", "component_quantity_0": "1"},
    )
    assert 400 <= refused.status_code < 500 and 'role="alert"' in refused.text
    api = client.get("/api/products/GIFT-1", headers=headers).get_json()["data"]
    assert api["components"] == [{"sku": "MUG-1", "quantity": 3}]


def test_the_overview_lists_pending_and_failed_listings(console, shop, tenant, client, headers):
    make_products(client, headers, "BAD-1")
    bad = list_product(tenant, "BAD-1", "amazon", "5.00")
    with write_transaction():
        Listing.update(sync_status="error", last_sync_error="GTIN is required").where(
            Listing.id == bad.id
        ).execute()
        Listing.update(sync_status="pending").where(Listing.id != bad.id).execute()
    page = console.get("/console/")
    assert page.status_code == 200
    assert 'data-testid="listings-error-count">(1)' in page.text
    assert 'data-testid="listings-pending-count">(1)' in page.text
    assert 'data-testid="listing-error">GTIN is required' in page.text
    assert 'href="/console/products/BAD-1"' in page.text


def test_the_delivery_log_shows_the_response_body(console, hooks_app):
    def respond(record):
        return 200, {}, b'{"ack": "<b>thanks</b>"}'

    with webhooks_support.Receiver(respond=respond) as receiver:
        created = post_form(
            console,
            "/console/settings/notifications",
            "/console/settings/notifications",
            {"url": receiver.url, "events": ["order.shipped"]},
        )
        assert created.status_code == 201
        webhook_id = re.search(
            r"/console/settings/notifications/(whk_[0-9A-Z]+)/test", created.text
        )
        page_path = f"/console/settings/notifications/{webhook_id.group(1)}"
        post_form(console, page_path, f"{page_path}/test")
        webhooks_support.deliver(hooks_app)
    link = re.search(rf"{page_path}/deliveries/(dlv_[0-9A-Z]+)", console.get(page_path).text)
    delivery = console.get(link.group(0))
    assert 'data-testid="response-body-1"' in delivery.text
    assert "{&#34;ack&#34;: &#34;&lt;b&gt;thanks&lt;/b&gt;&#34;}" in delivery.text


def _upload(console, data, name="products.csv", **form):
    page = console.get("/console/inventory/imports")
    assert page.status_code == 200, page.text[:1000]
    fields = {"csrf_token": csrf_of(page.text), **form}
    if data is not None:
        fields["file"] = (io.BytesIO(data), name)
    return console.post(
        "/console/inventory/imports", data=fields, content_type="multipart/form-data"
    )


def test_import_a_csv_with_a_dry_run_then_for_real(console, app, client, headers):
    rows = b"sku,title\nCSV-1,From a file\nCSV-2,\nCSV-3,Third\n"
    answer = _upload(console, rows, type="products", dry_run="1")
    assert answer.status_code == 303, answer.text[:2000]
    assert "notice=import-queued" in answer.headers["Location"]
    run_worker(app)
    job = console.get(answer.headers["Location"].split("?")[0])
    assert 'data-testid="job-status">completed' in job.text, job.text[-3000:]
    assert "dry run" in job.text.replace("_", " ")
    assert "VALIDATION_ERROR" in job.text  # row 3's missing title, with its row and column
    assert client.get("/api/products/CSV-1", headers=headers).status_code == 404
    answer = _upload(console, rows, type="products")
    run_worker(app)
    assert client.get("/api/products/CSV-1", headers=headers).status_code == 200
    page = console.get("/console/inventory/imports")
    assert page.text.count('href="/console/jobs/') >= 2


@pytest.mark.parametrize(
    "data, form, code",
    [
        (None, {"type": "products"}, "VALIDATION_ERROR"),
        (b"sku,title\nA,B\n", {"type": "recipes"}, "VALIDATION_ERROR"),
        (b"sku,colour\nA,red\n", {"type": "products"}, "CSV_UNKNOWN_COLUMN"),
    ],
)
def test_a_refused_upload_queues_nothing(console, data, form, code):
    answer = _upload(console, data, **form)
    assert 400 <= answer.status_code < 500 and code in answer.text, answer.text[:2000]
    assert 'role="alert"' in answer.text


def test_an_upload_needs_the_forms_csrf_token(console):
    answer = console.post(
        "/console/inventory/imports",
        data={"type": "products", "file": (io.BytesIO(b"sku,title\nA,B\n"), "p.csv")},
        content_type="multipart/form-data",
    )
    assert answer.status_code == 403 and "CSRF_TOKEN_INVALID" in answer.text
