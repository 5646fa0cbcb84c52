"""The OpenAPI document and the docs page: valid, complete, and served without the internet."""

import re
from html.parser import HTMLParser

from openapi_spec_validator import validate

from commerce_api.errors import CATALOGUE
from tests.support.openapi_support import resolve

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


def openapi_path(rule):
    """Flask's ``/api/products/<string:sku>`` as OpenAPI's ``/api/products/{sku}``."""
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)


def documented_rules(app):
    """Every /api rule and method except the docs themselves."""
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/") or rule.endpoint.startswith("apidocs."):
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield rule, method.lower()


def test_the_document_is_valid_openapi_3(spec):
    assert spec["openapi"].startswith("3.")
    validate(spec)
    assert spec["info"]["title"] and spec["info"]["version"]


def test_it_needs_no_authentication(client):
    assert client.get("/api/openapi.json").status_code == 200
    assert client.get("/api/docs").status_code == 200


def test_every_registered_endpoint_is_described(app, spec):
    missing = [
        f"{method.upper()} {openapi_path(rule)}"
        for rule, method in documented_rules(app)
        if method not in spec["paths"].get(openapi_path(rule), {})
    ]
    assert missing == []
    described = {
        (path, method)
        for path, item in spec["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }
    registered = {(openapi_path(rule), method) for rule, method in documented_rules(app)}
    assert described == registered  # and nothing is described that does not exist


def test_every_operation_has_a_summary_responses_and_security(app, spec):
    for rule, method in documented_rules(app):
        path = openapi_path(rule)
        operation = spec["paths"][path][method]
        assert operation.get("summary"), (method, path)
        responses = operation["responses"]
        successes = [code for code in responses if code.startswith("2")]
        assert successes, (method, path)
        public = path in (
            "/api/health",
            "/api/health/ready",
            "/api/marketplaces/{connection_id}/notifications",  # signed by the marketplace
        )
        if public:
            assert operation.get("security") == []
            continue
        assert operation["security"] == [{"bearerAuth": [], "tenantId": []}], (method, path)
        for status, code in (("401", "UNAUTHENTICATED"), ("403", "INSUFFICIENT_SCOPE")):
            assert status in responses, (method, path, status)
            assert code in responses[status]["description"]
        # unknown query parameters are refused everywhere, so 422 is always possible
        assert "422" in responses and "VALIDATION_ERROR" in responses["422"]["description"], (
            method,
            path,
        )


def test_error_responses_use_the_envelope(app, spec):
    error = resolve(spec, {"$ref": "#/components/schemas/Error"})
    assert error["required"] == ["error"]
    body = resolve(spec, error["properties"]["error"])
    assert set(body["required"]) == {"code", "message", "details"}
    for rule, method in documented_rules(app):
        for status, response in spec["paths"][openapi_path(rule)][method]["responses"].items():
            if rule.rule == "/api/health/ready":
                continue  # 503 answers the readiness shape a load balancer reads
            if status.startswith("4") or status.startswith("5"):
                schema = resolve(spec, response)["content"]["application/json"]["schema"]
                assert resolve(spec, schema) == error, (method, rule.rule, status)
                codes = re.findall(r"`([A-Z_]+)`", response.get("description", ""))
                for code in codes:
                    assert CATALOGUE[code][0] == int(status), (code, status)


def test_products_endpoints_describe_their_bodies_and_errors(spec):
    paths = spec["paths"]
    create = paths["/api/products"]["post"]
    body = resolve(spec, create["requestBody"]["content"]["application/json"]["schema"])
    assert set(body["required"]) == {"sku", "title"}
    for field in ("sku", "title", "description", "status", "gtin", "cost_price", "weight_kg"):
        assert field in body["properties"], field
    assert body["properties"]["cost_price"]["type"] == ["number", "null"]
    assert body["properties"]["images"]["type"] == "array"
    assert "201" in create["responses"]
    assert "DUPLICATE_SKU" in create["responses"]["409"]["description"]
    assert "INVALID_GTIN" in create["responses"]["422"]["description"]
    assert "INVALID_JSON" in create["responses"]["400"]["description"]
    assert "413" in create["responses"] and "415" in create["responses"]

    listing = paths["/api/products"]["get"]
    names = {p["name"] for p in listing["parameters"] if p["in"] == "query"}
    assert names == {
        "limit",
        "cursor",
        "order",
        "fields",
        "status",
        "marketplace",
        "category",
        "search",
        "sort",
    }
    assert "INVALID_CURSOR" in listing["responses"]["400"]["description"]
    page = resolve(spec, listing["responses"]["200"]["content"]["application/json"]["schema"])
    assert set(page["properties"]) == {"data", "meta"}
    meta = resolve(spec, page["properties"]["meta"])
    assert set(meta["properties"]) == {"total", "page", "limit", "nextCursor"}

    by_sku = paths["/api/products/{sku}"]
    assert "PRODUCT_NOT_FOUND" in by_sku["get"]["responses"]["404"]["description"]
    assert "OPEN_ORDERS_EXIST" in by_sku["delete"]["responses"]["409"]["description"]
    assert "204" in by_sku["delete"]["responses"]
    assert "requestBody" in by_sku["patch"]
    detail = resolve(
        spec, by_sku["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    )
    assert "listings" in resolve(spec, detail["properties"]["data"])["properties"]

    bulk = paths["/api/products/bulk"]["post"]
    bulk_body = resolve(spec, bulk["requestBody"]["content"]["application/json"]["schema"])
    assert bulk_body["properties"]["updates"]["maxItems"] == 100
    sync = paths["/api/products/{sku}/sync"]["post"]
    assert "202" in sync["responses"]
    assert sync["requestBody"]["required"] is False


class _AssetParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if attrs.get(name):
                self.urls.append(attrs[name])


def test_docs_page_uses_only_local_assets(client):
    response = client.get("/api/docs")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert not re.search(r"https?://", page), "the docs page must not load anything remote"
    parser = _AssetParser()
    parser.feed(page)
    assert parser.urls, "the page loads its script and style"
    assert any(u.endswith(".js") for u in parser.urls)
    assert any(u.endswith(".css") for u in parser.urls)
    for url in parser.urls:
        assert url.startswith("/"), url
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert len(asset.get_data()) > 1000, url
    assert "/api/openapi.json" in page


def test_missing_docs_asset_is_a_404_envelope(client):
    response = client.get("/api/docs/assets/nothing-here.js")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    traversal = client.get("/api/docs/assets/../../../etc/passwd")
    assert traversal.status_code == 404
