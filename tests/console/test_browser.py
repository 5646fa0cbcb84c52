"""The console end to end in a real browser (Debian's headless Chromium through selenium),
against a real gunicorn server and job worker on 127.0.0.1, with a screenshot of each step
under ``.screenshots/`` (``console-*.png``) (DESIGN 15).

One merchant's day: sign in with a key; set a stock level and watch the listing go pending,
then in sync once the worker pushes it (htmx polling, no reload); ship an order; apply a
price recommendation; create a narrow key and see its secret exactly once; register a
webhook to a local receiver, send a test event and read the delivery with its body and
the receiver's answer; draft a transfer, ship it and receive it partly then whole while
the destination's stock follows; cap a listing's allocation and see it go pending (and
on the Overview); sign out. axe-core (vendored under tests/console/vendor) checks every
page on the way.
"""

import contextlib
import json
import os
import pathlib

import pytest

from commerce_api.orders.models import Order
from commerce_api.pricing.models import Recommendation
from commerce_api.products.models import Listing, Product
from tests.support.browser import chromium, require_browser, screenshot
from tests.support.factories import make_key
from tests.support.orders_support import (
    connect,
    import_orders,
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
from tests.support.servers import gunicorn_server, start_command, stop_process
from tests.support.waiting import wait_for
from tests.support.webhooks_support import Receiver

pytestmark = pytest.mark.slow

AXE = (pathlib.Path(__file__).parent / "vendor" / "axe.min.js").read_text()
SERVER = {"WEBHOOK_ALLOW_PRIVATE_TARGETS": "1", "WEBHOOK_RETRY_SCHEDULE": "0,0,0"}
WORKER = {
    **SERVER,
    "LOG_LEVEL": "WARNING",
    "WORKER_POLL_INTERVAL": 0.05,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.05,
    "ORDER_PULL_INTERVAL_SECONDS": 3600,
}
WAIT = 30  # seconds any one thing may take in the browser


def axe_violations(driver):
    """axe-core's serious and critical violations on the page (WCAG 2.x A and AA rules)."""
    driver.execute_script(AXE)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})"
        ".then(r => done(JSON.stringify(r.violations))).catch(e => done(String(e)));"
    )
    violations = json.loads(result)
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in violations
        if v["impact"] in ("serious", "critical")
    ]


class Page:
    """The browser, with the few moves the steps make (all bounded by ``WAIT``)."""

    def __init__(self, driver, base, checked):
        from selenium.common.exceptions import (
            NoSuchElementException,
            StaleElementReferenceException,
        )
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver, self.base, self.checked, self.by = driver, base, checked, By
        # htmx swaps the polled parts of a page: an element read as it goes is read again
        self.wait = WebDriverWait(
            driver,
            WAIT,
            poll_frequency=0.1,
            ignored_exceptions=(NoSuchElementException, StaleElementReferenceException),
        )

    def open(self, path):
        self.driver.get(self.base + path)
        self.check_accessibility()

    def check_accessibility(self, label=None):
        path = label or self.driver.current_url.replace(self.base, "").split("?")[0]
        self.checked[path] = axe_violations(self.driver)

    def find(self, css):
        return self.driver.find_element(self.by.CSS_SELECTOR, css)

    def fill(self, css, text):
        field = self.find(css)
        field.clear()
        field.send_keys(text)

    def submit(self, css):
        """Press Enter on a control: the keyboard alone submits every form, follows links."""
        from selenium.webdriver.common.keys import Keys

        self.find(css).send_keys(Keys.ENTER)

    def text(self):
        return self.find("main").text

    def select(self, css, value):
        from selenium.webdriver.support.ui import Select

        Select(self.find(css)).select_by_value(value)

    def wait_text(self, css, expected):
        self.wait.until(lambda d: expected in d.find_element(self.by.CSS_SELECTOR, css).text)

    def shot(self, name):
        path = screenshot(self.driver, f"console-{name}")
        assert os.path.getsize(path) > 0


@pytest.fixture
def day(app, client, headers, tenant, runner, tmp_path, database_url):
    """A shop with a listed product, an order to ship, a pending recommendation; the server
    running (the worker is started by the test, when it wants the push to happen)."""
    require_browser()
    make_products(client, headers, "MUG-1", "TOWEL-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    list_product(tenant, "MUG-1", "amazon", "21.00", quantity=10)
    list_product(tenant, "TOWEL-1", "amazon", "12.00", quantity=5)
    seed_offers(tenant, "amazon", [offer("TOWEL-1", "A", "9.50")])
    create_rule(client, headers, type="competitor_match", value=0)
    recalculate(client, headers, app, marketplace="amazon", skus=["TOWEL-1"])
    import_orders(runner, tenant, tmp_path, [order_body("EXT-1")])
    _, secret = make_key(tenant, name="merchant")
    with (
        Receiver(respond=_acknowledge) as receiver,
        gunicorn_server(database_url, **SERVER) as base,
    ):
        yield {
            "tenant": tenant,
            "base": base,
            "secret": secret,
            "warehouse": warehouse,
            "receiver": receiver,
            "database_url": database_url,
            "order": Order.get(Order.external_order_id == "EXT-1"),
        }


def _acknowledge(record):
    """The receiver's answer: a JSON body the delivery log shows."""
    return 200, {"Content-Type": "application/json"}, b'{"received": true, "by": "erp"}'


@contextlib.contextmanager
def worker(database_url):
    process = start_command(["worker"], database_url, **WORKER)
    try:
        yield process
    finally:
        stop_process(process)


def test_a_merchants_day_in_the_browser(day):
    checked = {}
    with chromium() as driver:
        page = Page(driver, day["base"], checked)
        # 1. sign in with a key
        page.open("/console/")
        assert "/console/sign-in" in driver.current_url
        page.shot("01-sign-in")
        page.fill("#api_key", "ck_not-a-key")
        page.submit("#api_key")
        page.wait_text("main", "UNAUTHENTICATED")
        page.check_accessibility("sign-in, refused")
        # the keyboard's first stop is the skip link
        from selenium.webdriver.common.keys import Keys

        driver.find_element(page.by.TAG_NAME, "body").send_keys(Keys.TAB)
        assert driver.switch_to.active_element.text == "Skip to content"
        page.fill("#api_key", day["secret"])
        page.submit("#api_key")
        page.wait.until(lambda d: "Overview" in d.title)
        page.check_accessibility()
        page.shot("02-overview")

        # 2. set a stock level; the listing goes pending, then in sync once pushed
        page.open("/console/inventory/MUG-1")
        page.fill("#quantity", "7")
        page.submit("#quantity")
        page.wait_text(".notice", "The stock level is set.")
        assert page.find(f'[data-testid="on-hand-{day["warehouse"]}"]').text == "7"
        page.shot("03-stock-set")
        page.open("/console/products/MUG-1")
        page.wait_text('[data-testid="sync-amazon"]', "pending")
        page.shot("04-listing-pending")
        with worker(day["database_url"]):
            # no reload: htmx polls the listings until the push is done
            page.wait_text('[data-testid="sync-amazon"]', "in sync")
            page.shot("05-listing-in-sync")
            mug = Product.get(Product.sku == "MUG-1")
            listing = Listing.get(Listing.product == mug.id)
            assert listing.sync_status == "in_sync" and listing.quantity < 10

            # 3. ship an order
            page.open(f"/console/orders/{day['order'].id}")
            page.fill("#carrier", "UPS")
            page.fill("#tracking_number", "1Z999AA10123456784")
            page.submit("#tracking_number")
            page.wait_text(".notice", "The shipment is confirmed.")
            assert page.find('[data-testid="order-status"]').text == "shipped"
            page.shot("06-order-shipped")

            # 4. apply a recommendation
            page.open("/console/pricing")
            page.shot("07-pricing")
            page.submit("form[action$='/apply'] button")
            page.wait_text(".notice", "The recommendation is applied.")
            assert Recommendation.get().status == "applied"
            page.shot("08-recommendation-applied")

            # 5. a narrow key: its secret exactly once
            page.open("/console/settings/api-keys")
            page.fill("#k-name", "catalogue reader")
            page.find("#k-products\\:read").send_keys(" ")  # the space bar ticks a box
            page.submit("#k-name")
            page.wait_text(".secret", "shown on this page only")
            secret = page.find('[data-testid="new-secret"]').get_attribute("value")
            assert secret.startswith("ck_")
            page.shot("09-key-secret-once")
            page.open("/console/settings/api-keys")
            assert secret not in driver.page_source
            assert "catalogue reader" in page.text()

            # 6. a webhook to a local receiver, a test event, the delivery with its body
            page.open("/console/settings/notifications")
            page.fill("#w-url", day["receiver"].url + "/hooks")
            page.find("#e-order\\.shipped").send_keys(" ")
            page.submit("#w-url")
            page.wait_text(".secret", "shown on this page only")
            page.check_accessibility("webhook endpoint")
            page.shot("10-webhook-secret-once")
            page.submit("form[action$='/test'] button")
            page.wait_text(".notice", "A test event is queued")
            assert wait_for(lambda: day["receiver"].bodies(), timeout=WAIT)
            assert wait_for(lambda: _delivered(page), timeout=WAIT)
            page.shot("11-delivery-log")
            page.submit("td a[href*='/deliveries/']")  # Enter follows a link
            page.wait_text("main", "Request body")
            page.check_accessibility()
            body = page.find('[data-testid="delivery-body"]').text
            assert '"type": "webhook.test"' in body
            answer = page.find('[data-testid="response-body-1"]').text
            assert answer == '{"received": true, "by": "erp"}'
            page.shot("12-delivery-body")
            # the worker has pushed everything before it stops: the listing is in sync
            page.open("/console/products/MUG-1")
            page.wait_text('[data-testid="sync-amazon"]', "in sync")

        # 7. cap a listing's allocation: it goes pending (no worker runs now), on the Overview
        page.open("/console/products/MUG-1")
        page.fill("#l1-max_quantity", "1")
        page.submit("#l1-max_quantity")
        page.wait_text(".notice", "The listing is changed")
        page.wait_text('[data-testid="sync-amazon"]', "pending")
        assert "at most 1" in page.find('[data-testid="allocation-amazon"]').text
        page.check_accessibility("product, allocation")
        page.shot("19-allocation-cap-pending")
        page.open("/console/")
        assert page.find('[data-testid="listings-pending-count"]').text != "(0)"
        assert page.find("#h-listings-pending + table a[href='/console/products/MUG-1']")
        page.shot("20-overview-pending-listings")

        # 8. a transfer: drafted, shipped, received partly then whole; the stock follows
        spare = make_own_warehouse(day["tenant"], name="Spare")
        source = day["warehouse"]
        page.open("/console/inventory/transfers")
        page.select("#t-from", source)
        page.select("#t-to", spare)
        page.fill("#t-reference", "PO-7")
        page.fill("#t-sku-0", "MUG-1")
        page.fill("#t-qty-0", "2")
        page.submit("#t-reference")
        page.wait_text(".notice", "The transfer is drafted.")
        page.check_accessibility("transfer")
        transfer_path = driver.current_url.replace(day["base"], "").split("?")[0]
        page.shot("21-transfer-draft")
        page.submit("form[action$='/ship'] button")
        page.wait_text(".notice", "in transit")
        page.open("/console/inventory/MUG-1")
        assert page.find(f'[data-testid="incoming-{spare}"]').text == "2"
        page.shot("22-transfer-in-transit-stock")
        page.open(transfer_path)
        page.fill("#r-1", "1")
        page.submit("#r-1")
        page.wait_text(".notice", "The receipt is recorded.")
        assert page.find('[data-testid="received-MUG-1"]').text == "1"
        page.submit("form:not(#receive-lines)[action$='/receive'] button")
        page.wait_text('[data-testid="transfer-status"]', "received")
        page.shot("23-transfer-received")
        page.open("/console/inventory/MUG-1")
        assert page.find(f'[data-testid="on-hand-{spare}"]').text == "2"
        assert page.find(f'[data-testid="incoming-{spare}"]').text == "0"
        page.shot("24-stock-after-transfer")
        page.open("/console/inventory/transfers")
        page.shot("25-transfers")

        # 9. the other pages, for the accessibility check and the README's pictures
        for path, name in [
            ("/console/products", "13-products"),
            ("/console/orders", "14-orders"),
            ("/console/inventory", "15-inventory"),
            ("/console/jobs", "16-jobs"),
            ("/console/inventory/imports", "26-imports"),
            ("/console/listings?sync_status=pending", "27-listings-pending"),
            ("/console/settings/marketplaces", "17-marketplaces"),  # its link is followed next
        ]:
            page.open(path)
            page.shot(name)
        page.submit("td a[href*='/console/settings/marketplaces/']")
        page.wait_text("main", "Recent sync history")
        page.check_accessibility()
        page.open("/console/products/NO-SUCH-SKU")
        assert "PRODUCT_NOT_FOUND" in page.text()

        # 10. sign out: the session is gone, the pages ask for a key again
        page.submit("header form button")
        page.wait.until(lambda d: "/console/sign-in" in d.current_url)
        page.shot("18-signed-out")
        page.open("/console/orders")
        assert "/console/sign-in" in driver.current_url

        # the check can fail: a page with an unlabelled field and an image without text
        driver.get("data:text/html,<html lang=en><title>t</title><input><img src=x.png>")
        assert {v["id"] for v in axe_violations(driver)} >= {"label", "image-alt"}

    bad = {path: found for path, found in checked.items() if found}
    assert bad == {}, json.dumps(bad, indent=1)
    assert len(checked) >= 21, sorted(checked)


def _delivered(page):
    page.driver.refresh()
    return "succeeded" in page.text()
