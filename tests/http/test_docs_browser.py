"""/api/docs in a real browser (headless Chromium): the page renders the OpenAPI 3.1 document,
lists every operation of it, and "Try it out" sends a request and shows its answer.

Swagger UI 4 answered this document with "Unable to render this definition" and a 200 page:
only a browser sees that.
"""

import pytest

from tests.support.browser import chromium, screenshot
from tests.support.factories import auth_headers, create_product, make_key, make_tenant
from tests.support.servers import gunicorn_server
from tests.support.waiting import wait_for

METHODS = ("get", "post", "put", "patch", "delete")

pytestmark = pytest.mark.slow


def documented_operations(spec):
    return {
        (method, path)
        for path, item in spec["paths"].items()
        for method in item
        if method in METHODS
    }


def shown_operations(driver):
    """(method, path) of every operation block the page shows."""
    pairs = driver.execute_script(
        """
        return Array.from(document.querySelectorAll('.opblock')).map(block => [
          block.querySelector('.opblock-summary-method').textContent.trim().toLowerCase(),
          block.querySelector('.opblock-summary-path').getAttribute('data-path'),
        ]);
        """
    )
    return {tuple(pair) for pair in pairs or []}


def test_the_docs_page_lists_every_operation_and_try_it_out_works(app, client, database_url, spec):
    from selenium.webdriver.common.by import By

    tenant = make_tenant()
    _, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    create_product(client, headers, sku="DOCS-MUG", title="A mug seen from the docs page")
    expected = documented_operations(spec)
    with gunicorn_server(database_url, workers=1) as base, chromium() as driver:
        driver.get(base + "/api/docs")
        # generous bounds: the suite runs eight processes on a small machine
        shown = wait_for(lambda: len(shown_operations(driver)) >= len(expected), timeout=60)
        if not shown:
            screenshot(driver, "docs-not-rendered")
        page = driver.find_element(By.TAG_NAME, "body").text
        assert "Unable to render this definition" not in page
        assert shown_operations(driver) == expected

        # authorize as the page's Authorize dialog would, then try GET /api/products
        driver.execute_script(
            "window.ui.preauthorizeApiKey('bearerAuth', arguments[0]);"
            "window.ui.preauthorizeApiKey('tenantId', arguments[1]);",
            headers["Authorization"].split(" ", 1)[1],
            headers["X-Tenant-ID"],
        )
        block = driver.find_element(By.ID, "operations-products-listProducts")
        block.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
        try_out = wait_for(lambda: block.find_elements(By.CSS_SELECTOR, ".try-out__btn"), 30)
        assert try_out, "no Try it out button"
        try_out[0].click()
        execute = wait_for(lambda: block.find_elements(By.CSS_SELECTOR, ".execute"), 30)
        assert execute, "no Execute button"
        execute[0].click()

        def answer():
            cells = block.find_elements(
                By.CSS_SELECTOR, ".live-responses-table tr.response td.response-col_status"
            )
            bodies = block.find_elements(By.CSS_SELECTOR, ".live-responses-table .microlight")
            if cells and bodies and "DOCS-MUG" in bodies[0].text:
                return cells[0].text.strip(), bodies[0].text
            return None

        shown_answer = wait_for(answer, timeout=60)
        if not shown_answer:
            screenshot(driver, "docs-try-it-out")
        assert shown_answer, "the page did not show the answer of GET /api/products"
        status, body = shown_answer
        assert status == "200"
        assert "A mug seen from the docs page" in body
