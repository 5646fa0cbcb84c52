"""HTTP conventions: request ids, content types, the error envelope from every layer, and a
sweep of bad input that must always get a clear 4xx (a 500 is always a bug)."""

import io
import json
import logging
import re

import peewee
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commerce_api.products import services
from tests.support.factories import create_product, product_body, snapshot
from tests.support.http_support import api_rules, assert_refused, concrete_path, error_code
from tests.support.products_support import connect

REQUEST_ID = re.compile(r"^req_[0-9A-Z]{26}$")


# Request ids and content types -----------------------------------------------------------


def _responses(client, headers):
    """One response of every kind: 200, 201, 202, 204, 400, 401, 404, 405, 413, 415, 422."""
    if client.get("/api/products/RID-1", headers=headers).status_code == 404:
        connect(headers["X-Tenant-ID"], "amazon_us")
    create = client.post("/api/products", json=product_body("RID-1"), headers=headers)
    return {
        "201": create,
        "200": client.get("/api/products", headers=headers),
        "202": client.post("/api/products/RID-1/sync", headers=headers),
        "204": client.delete("/api/products/RID-1", headers=headers),
        "400": client.post(
            "/api/products", data="{", content_type="application/json", headers=headers
        ),
        "401": client.get("/api/products"),
        "404": client.get("/api/nowhere", headers=headers),
        "405": client.put("/api/products", headers=headers),
        "413": client.post(
            "/api/products",
            data=b" " * (1024 * 1024 + 1),
            content_type="application/json",
            headers=headers,
        ),
        "415": client.post("/api/products", data="x", content_type="text/plain", headers=headers),
        "422": client.post("/api/products", json={}, headers=headers),
        "health": client.get("/api/health", headers=headers),
    }


def test_every_response_has_a_generated_request_id(client, headers):
    seen = set()
    for label, response in _responses(client, headers).items():
        if label.isdigit():
            assert response.status_code == int(label), (label, response.get_json())
        request_id = response.headers.get("X-Request-ID")
        assert request_id and REQUEST_ID.match(request_id), label
        seen.add(request_id)
    assert len(seen) == 12  # one per request


def test_every_response_echoes_the_callers_request_id(client, headers):
    sent = {**headers, "X-Request-ID": "caller-id-123"}
    for label, response in _responses(client, sent).items():
        if label == "401":
            continue  # sent without any header at all
        assert response.headers["X-Request-ID"] == "caller-id-123", label
    response = client.get("/api/products", headers={"X-Request-ID": "abc"})
    assert response.status_code == 401 and response.headers["X-Request-ID"] == "abc"


@pytest.mark.parametrize("bad", ["x" * 201, "tab\there", "bell\x07"])
def test_unusable_request_ids_are_replaced(client, headers, bad):
    response = client.get("/api/products", headers={**headers, "X-Request-ID": bad})
    assert REQUEST_ID.match(response.headers["X-Request-ID"])


def test_every_body_is_json_and_204_has_none(client, headers):
    for label, response in _responses(client, headers).items():
        if label == "204":
            assert response.get_data() == b""
            assert "Content-Type" not in response.headers
            continue
        assert response.headers["Content-Type"] == "application/json", label
        json.loads(response.get_data())
        if label.isdigit() and int(label) >= 400:
            assert error_code(response)


def test_health_needs_no_authentication(client):
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {"status", "version", "timestamp"}
    assert body["status"] == "ok" and body["version"]
    assert re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$", body["timestamp"])
    assert REQUEST_ID.match(response.headers["X-Request-ID"])


# Request-layer errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"{'sku': 'x'}",
        b'{"sku": "x",}',
        b'{"sku": "x"} trailing',
        b'{"sku": "\xff\xfe"}',  # not UTF-8
        '{"sku": "U16", "title": "x"}'.encode("utf-16"),
        '{"sku": "U32", "title": "x"}'.encode("utf-32"),
        b"\xef\xbb\xbf" + b'{"sku": "BOM", "title": "x"}',  # a BOM is not JSON
        b"[" * 100_000 + b"]" * 100_000,  # nesting deeper than any decoder
        b'{"sku": "NL", "title": "raw\ncontrol"}',
        b'{"sku": "SUR", "title": "lone \\ud800 surrogate"}',
    ],
)
def test_malformed_json_is_400(client, headers, raw):
    assert_refused(
        client,
        "POST",
        "/api/products",
        headers,
        400,
        "INVALID_JSON",
        data=raw,
        content_type="application/json",
    )


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "application/xml", "text/json"],
)
def test_non_json_body_is_415(client, headers, content_type):
    error = assert_refused(
        client,
        "POST",
        "/api/products",
        headers,
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        data=json.dumps(product_body("MT-1")),
        content_type=content_type,
    )
    assert error["details"] == {"content_type": content_type}


def test_json_with_a_charset_is_json(client, headers):
    response = client.post(
        "/api/products",
        data=json.dumps(product_body("CS-1")),
        content_type="application/json; charset=utf-8",
        headers=headers,
    )
    assert response.status_code == 201


def test_body_over_the_limit_is_413(client, headers):
    body = json.dumps(product_body("BIG", description="x" * (1024 * 1024)))
    error = assert_refused(
        client,
        "POST",
        "/api/products",
        headers,
        413,
        "PAYLOAD_TOO_LARGE",
        data=body,
        content_type="application/json",
    )
    assert error["details"] == {"max_bytes": 1024 * 1024}


def test_body_limit_is_configurable(make_app, headers):
    client = make_app(MAX_BODY_BYTES=200).test_client()
    small = json.dumps({"sku": "SMALL", "title": "x"})
    assert (
        client.post(
            "/api/products", data=small, content_type="application/json", headers=headers
        ).status_code
        == 201
    )
    big = json.dumps(product_body("LARGE", description="y" * 300))
    assert_refused(
        client,
        "POST",
        "/api/products",
        headers,
        413,
        "PAYLOAD_TOO_LARGE",
        data=big,
        content_type="application/json",
    )


def test_streamed_body_without_length_is_bounded(make_app, headers):
    """A chunked body (no Content-Length) is read only up to the limit, then refused."""
    client = make_app(MAX_BODY_BYTES=1000).test_client()
    body = json.dumps(product_body("STREAM", description="z" * 2_000_000)).encode()
    stream = io.BytesIO(body)
    error = assert_refused(
        client,
        "POST",
        "/api/products",
        headers,
        413,
        "PAYLOAD_TOO_LARGE",
        input_stream=stream,
        content_type="application/json",
        environ_overrides={"wsgi.input_terminated": True},
    )
    assert error["details"] == {"max_bytes": 1000}
    assert stream.tell() < 100_000  # the 2 MB stream was never read whole


def test_streamed_body_within_the_limit_is_read(make_app, headers):
    client = make_app(MAX_BODY_BYTES=1000).test_client()
    body = json.dumps({"sku": "STREAM-OK", "title": "x"}).encode()
    response = client.post(
        "/api/products",
        input_stream=io.BytesIO(body),
        content_type="application/json",
        headers=headers,
        environ_overrides={"wsgi.input_terminated": True},
    )
    assert response.status_code == 201, response.get_json()


@pytest.mark.parametrize("authenticated", [True, False])
def test_unknown_path_is_404(client, headers, authenticated):
    sent = headers if authenticated else {}
    for path in ("/api/nowhere", "/api/products/X/unknown", "/api", "/", "/api/products/"):
        response = client.get(path, headers=sent)
        assert response.status_code == 404, path
        assert error_code(response) == "RESOURCE_NOT_FOUND"


def test_unknown_path_is_404_whatever_the_body(client, headers):
    for kwargs in (
        {"data": "{", "content_type": "application/json"},
        {"data": "x", "content_type": "text/plain"},
        {"data": b" " * (1024 * 1024 + 10), "content_type": "application/json"},
    ):
        assert_refused(client, "POST", "/api/nowhere", headers, 404, "RESOURCE_NOT_FOUND", **kwargs)


@pytest.mark.parametrize(
    "method,path,allowed",
    [
        ("PUT", "/api/products", {"GET", "HEAD", "OPTIONS", "POST"}),
        ("DELETE", "/api/products", {"GET", "HEAD", "OPTIONS", "POST"}),
        ("GET", "/api/products/X-1/sync", {"OPTIONS", "POST"}),
        ("POST", "/api/products/X-1", {"DELETE", "GET", "HEAD", "OPTIONS", "PATCH"}),
        ("POST", "/api/health", {"GET", "HEAD", "OPTIONS"}),
    ],
)
def test_wrong_method_is_405_with_allow(client, headers, method, path, allowed):
    for kwargs in ({}, {"data": "not json", "content_type": "text/plain"}):
        error = assert_refused(client, method, path, headers, 405, "METHOD_NOT_ALLOWED", **kwargs)
        assert set(error["details"]["allowed_methods"]) == allowed
        response = client.open(path, method=method, headers=headers, **kwargs)
        assert {m.strip() for m in response.headers["Allow"].split(",")} == allowed


def test_unexpected_error_is_500_without_internals(client, headers, monkeypatch, caplog):
    def boom(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(services, "list_products", boom)
    with caplog.at_level(logging.ERROR, logger="commerce_api"):
        response = client.get("/api/products", headers={**headers, "X-Request-ID": "trace-500"})
    assert response.status_code == 500
    assert response.get_json() == {
        "error": {
            "code": "INTERNAL_ERROR",
            "message": "An unexpected error occurred.",
            "details": {},
        }
    }
    assert response.headers["X-Request-ID"] == "trace-500"
    assert "secret internal detail" not in response.get_data(as_text=True)
    assert any("trace-500" in r.getMessage() for r in caplog.records)


def test_database_lock_timeout_is_503(client, headers, monkeypatch):
    def locked(*args, **kwargs):
        raise peewee.OperationalError("database is locked")

    monkeypatch.setattr(services, "list_products", locked)
    response = client.get("/api/products", headers=headers)
    assert response.status_code == 503
    assert error_code(response) == "SERVICE_UNAVAILABLE"
    assert response.headers["Retry-After"] == "1"


def test_every_endpoint_refuses_unknown_query_parameters(app, client, headers):
    create_product(client, headers, sku="X-1")
    checked = 0
    for rule, method in api_rules(app):
        path = concrete_path(rule) + "?surely_unknown=1"
        kwargs = {"json": {}} if method in ("POST", "PATCH", "PUT") else {}
        before = snapshot()
        response = client.open(path, method=method, headers=headers, **kwargs)
        assert response.status_code == 422, (method, path, response.get_json())
        assert error_code(response) == "VALIDATION_ERROR"
        assert "surely_unknown" in response.get_json()["error"]["details"]["fields"]
        assert snapshot() == before
        checked += 1
    assert checked >= 7


# Text the databases cannot store ---------------------------------------------------------


@pytest.mark.parametrize(
    "body,field",
    [
        ({"sku": "NUL-1", "title": "a\u0000b"}, "title"),
        ({"sku": "NUL-2", "title": "t", "images": ["https://x.example.com/\u0000.jpg"]}, "images"),
        ({"sku": "NUL\u00003", "title": "t"}, "sku"),
        ({"sku": "NUL-4", "title": "t", "description": "\u0000"}, "description"),
    ],
)
def test_nul_characters_in_a_body_are_422(client, headers, body, field):
    error = assert_refused(
        client, "POST", "/api/products", headers, 422, "VALIDATION_ERROR", json=body
    )
    assert any(name.split(".")[0] == field for name in error["details"]["fields"])


def test_nul_characters_in_bulk_and_patch_are_422(client, headers):
    create_product(client, headers, sku="NUL-P")
    assert_refused(
        client,
        "PATCH",
        "/api/products/NUL-P",
        headers,
        422,
        "VALIDATION_ERROR",
        json={"title": "\u0000"},
    )
    assert_refused(
        client,
        "POST",
        "/api/products/bulk",
        headers,
        422,
        "VALIDATION_ERROR",
        json={"updates": [{"sku": "NUL-P", "title": "x\u0000"}]},
    )


def test_nul_characters_in_a_query_are_422(client, headers):
    error = assert_refused(
        client, "GET", "/api/products?search=a%00b", headers, 422, "VALIDATION_ERROR"
    )
    assert list(error["details"]["fields"]) == ["search"]


@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
def test_nul_characters_in_a_path_are_404(client, headers, method):
    kwargs = {"json": {"title": "x"}} if method == "PATCH" else {}
    assert_refused(
        client, method, "/api/products/a%00b", headers, 404, "RESOURCE_NOT_FOUND", **kwargs
    )


# A table of bad values: every one is a 422 naming its field, and changes nothing ----------

BAD_VALUES = {
    "sku": [None, "", "x" * 65, "has space", "slash/x", "ünï", 5, ["x"], {"a": 1}, True],
    "title": [None, "", "x" * 501, 5, True, ["x"]],
    "description": ["x" * 10_001, 5, False, ["x"], {"a": "b"}],
    "status": ["deleted", "ACTIVE", None, 1, ""],
    "gtin": [4006381333931, ["4006381333931"], True],
    "category": ["", "x" * 101, 5],
    "cost_price": [
        "12",
        "12.50",
        True,
        False,
        -0.01,
        -1,
        1.234,
        1e10,
        10**12,
        [],
        {},
        {"amount": 1},
    ],
    "weight_kg": ["1", True, -1, -0.001, 1.2345, 1e9, 9_999_999_999, []],
    "images": [
        "https://img.example.com/a.jpg",
        ["ftp://img.example.com/a.jpg"],
        ["javascript:alert(1)"],
        ["not a url"],
        ["//img.example.com/a.jpg"],
        [5],
        [None],
        ["https://img.example.com/" + "a" * 2048 + ".jpg"],
        ["https://img.example.com/a.jpg"] * 21,
        None,
        {"url": "https://img.example.com/a.jpg"},
    ],
    "price": [1],
    "listings": [[]],
    "id": ["prod_x"],
    "created_at": ["2026-01-01T00:00:00.000Z"],
    "updated_at": ["2026-01-01T00:00:00.000Z"],
    "": ["x"],
}
BAD_CASES = [(field, value) for field, values in BAD_VALUES.items() for value in values]


@pytest.mark.parametrize("field,value", BAD_CASES)
def test_bad_value_on_create_is_422(client, headers, field, value):
    body = {**product_body("BAD-1"), field: value}
    error = assert_refused(
        client, "POST", "/api/products", headers, 422, "VALIDATION_ERROR", json=body
    )
    assert list(error["details"]["fields"]) == [field]


@pytest.mark.parametrize("field,value", [c for c in BAD_CASES if c[0] != "sku"])
def test_bad_value_on_patch_is_422(client, headers, field, value):
    create_product(client, headers, sku="BAD-2")
    error = assert_refused(
        client,
        "PATCH",
        "/api/products/BAD-2",
        headers,
        422,
        "VALIDATION_ERROR",
        json={field: value},
    )
    assert list(error["details"]["fields"]) == [field]


@pytest.mark.parametrize("field,value", [c for c in BAD_CASES if c[0] != "sku"])
def test_bad_value_in_a_bulk_item_fails_that_item(client, headers, field, value):
    create_product(client, headers, sku="BAD-3")
    before = snapshot()
    response = client.post(
        "/api/products/bulk",
        json={"updates": [{"sku": "BAD-3", field: value}]},
        headers=headers,
    )
    assert response.status_code == 200
    data = response.get_json()["data"]
    assert (data["updated"], data["failed"]) == (0, 1)
    assert data["errors"][0]["code"] == "VALIDATION_ERROR"
    assert list(data["errors"][0]["details"]["fields"]) == [field]
    assert snapshot() == before


@pytest.mark.parametrize("raw", [b"[]", b"[{}]", b"5", b'"text"', b"null", b"true", b"1.5"])
@pytest.mark.parametrize(
    "method,path",
    [
        ("POST", "/api/products"),
        ("PATCH", "/api/products/SHAPE"),
        ("POST", "/api/products/bulk"),
        ("POST", "/api/products/SHAPE/sync"),
    ],
)
def test_a_body_that_is_not_an_object_is_422(client, headers, raw, method, path):
    create_product(client, headers, sku="SHAPE")
    error = assert_refused(
        client,
        method,
        path,
        headers,
        422,
        "VALIDATION_ERROR",
        data=raw,
        content_type="application/json",
    )
    assert error["details"]["fields"]


def test_boundary_values_are_accepted(client, headers):
    body = {
        "sku": "A" * 64,
        "title": "t" * 500,
        "description": "d" * 10_000,
        "category": "c" * 100,
        "cost_price": 9999999999.99,
        "weight_kg": 999999999.999,
        "images": ["https://img.example.com/" + "a" * 2000 + ".jpg"] * 20,
        "gtin": None,
    }
    response = client.post("/api/products", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    data = client.get("/api/products/" + "A" * 64, headers=headers).get_json()["data"]
    assert data["cost_price"] == 9999999999.99 and data["weight_kg"] == 999999999.999
    assert data["title"] == "t" * 500 and len(data["images"]) == 20


def test_unicode_text_round_trips(client, headers):
    body = product_body(
        "UNI-1", title="Tasse émaillée 🍵 — 350 ml", description="日本語\ttab\nline"
    )
    data = client.post("/api/products", json=body, headers=headers).get_json()["data"]
    assert data["title"] == body["title"] and data["description"] == body["description"]
    again = client.get("/api/products/UNI-1", headers=headers).get_json()["data"]
    assert again["title"] == body["title"]


# Property-based sweep: whatever the body or query, never a 500 ----------------------------

FIELD_NAMES = [
    "sku",
    "title",
    "description",
    "status",
    "gtin",
    "category",
    "cost_price",
    "weight_kg",
    "images",
    "updates",
    "marketplaces",
    "id",
    "x",
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=80)
    | st.sampled_from(
        [
            "\ud800",
            "a\u0000",
            "https://img.example.com/x.jpg",
            "4006381333931",
            "active",
            "archived",
            "SKU-1",
            "%",
            "_",
            "-1",
            "1e400",
        ]
    )
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=10), children, max_size=6)
    ),
    max_leaves=20,
)
bodies = st.dictionaries(st.sampled_from(FIELD_NAMES), json_values, max_size=8) | json_values

SWEEP = settings(
    max_examples=120,
    deadline=None,
    # the same examples on every run (CI never flakes) and no .hypothesis/ directory
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _assert_clean(response):
    assert response.status_code < 500, response.get_data(as_text=True)
    if response.status_code >= 400:
        assert error_code(response)
        assert response.headers["X-Request-ID"]
    elif response.status_code != 204:
        assert "data" in response.get_json()


def _raw(body):
    # json.dumps escapes lone surrogates and keeps NaN/Infinity, as some clients send them
    return json.dumps(body)


@SWEEP
@given(
    body=bodies,
    method_path=st.sampled_from(
        [
            ("POST", "/api/products"),
            ("PATCH", "/api/products/SKU-1"),
            ("POST", "/api/products/bulk"),
            ("POST", "/api/products/SKU-1/sync"),
        ]
    ),
)
def test_any_body_gets_a_clean_answer(client, headers, body, method_path):
    if client.get("/api/products/SKU-1", headers=headers).status_code == 404:
        create_product(client, headers, sku="SKU-1")
    method, path = method_path
    response = client.open(
        path, method=method, data=_raw(body), content_type="application/json", headers=headers
    )
    _assert_clean(response)


@SWEEP
@given(
    body=st.dictionaries(
        st.sampled_from(["sku", "title", "status", "gtin", "cost_price", "weight_kg", "images"]),
        json_values,
        max_size=6,
    )
)
def test_any_bulk_item_gets_a_clean_answer(client, headers, body):
    if client.get("/api/products/SKU-1", headers=headers).status_code == 404:
        create_product(client, headers, sku="SKU-1")
    response = client.post(
        "/api/products/bulk",
        data=_raw({"updates": [{"sku": "SKU-1", **body}, body]}),
        content_type="application/json",
        headers=headers,
    )
    _assert_clean(response)


query_values = st.text(max_size=30) | st.sampled_from(
    [
        "0",
        "1",
        "200",
        "201",
        "-5",
        "asc",
        "desc",
        "sku",
        "title",
        "created_at",
        "updated_at",
        "active",
        "archived",
        "id,sku",
        "listings",
        "\u0000",
        "%00",
        "eyJsIjoicHJvZHVjdHMifQ",
    ]
)


@SWEEP
@given(
    query=st.dictionaries(
        st.sampled_from(
            [
                "limit",
                "cursor",
                "order",
                "sort",
                "status",
                "marketplace",
                "search",
                "fields",
                "page",
                "x",
            ]
        ),
        query_values,
        max_size=5,
    )
)
def test_any_list_query_gets_a_clean_answer(client, headers, query):
    response = client.get("/api/products", query_string=query, headers=headers)
    _assert_clean(response)


@SWEEP
@given(sku=st.text(min_size=1, max_size=80).filter(lambda s: "/" not in s))
def test_any_sku_in_a_path_gets_a_clean_answer(client, headers, sku):
    from urllib.parse import quote

    path = "/api/products/" + quote(sku, safe="")
    for method, kwargs in (("GET", {}), ("PATCH", {"json": {}}), ("DELETE", {})):
        _assert_clean(client.open(path, method=method, headers=headers, **kwargs))


def test_json_output_never_carries_nan_or_infinity():
    import math

    from commerce_api.http.envelope import dumps

    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            dumps({"price": bad})
    assert dumps({"price": 1.5}) == '{"price":1.5}'


def test_the_app_still_tells_coroutine_functions_from_plain_ones(app):
    """``ensure_sync`` answers plain functions from their code flags; an ``async def`` must
    still go to Flask's own handling (wrapped, or refused without the async extra)."""

    def plain():
        return 1

    class View:
        def get(self):
            return 2

    async def coroutine():
        return 3

    assert app.ensure_sync(plain) is plain
    method = View().get
    assert app.ensure_sync(method) is method
    try:
        handled = app.ensure_sync(coroutine)
    except RuntimeError as exc:  # Flask without asgiref: "Install Flask with the 'async' extra"
        assert "async" in str(exc)
    else:
        assert handled is not coroutine
