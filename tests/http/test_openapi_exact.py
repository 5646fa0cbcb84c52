"""The document says exactly what the service accepts: job params per type, fields, empty
PATCH, request line and header limits (414 / 431 in the envelope)."""

import re

import pytest

from commerce_api.http import limits
from commerce_api.http.lists import fields_pattern, parse_fields
from commerce_api.jobs import registry
from commerce_api.products import services as product_services
from commerce_api.serve import gunicorn_options
from tests.support.factories import create_product
from tests.support.openapi_support import resolve


def test_job_params_are_one_of_per_public_type(spec):
    body = spec["paths"]["/api/ai-jobs"]["post"]["requestBody"]["content"]["application/json"]
    schema = body["schema"]
    assert schema["discriminator"]["propertyName"] == "type"
    mapping = schema["discriminator"]["mapping"]
    assert set(mapping) == set(registry.public_types())
    assert [v["$ref"] for v in schema["oneOf"]] == list(mapping.values())
    internal = [n for n in registry.known_types() if n not in registry.public_types()]
    assert internal and not set(internal) & set(mapping)
    for name, ref in mapping.items():
        variant = resolve(spec, {"$ref": ref})
        assert variant["properties"]["type"]["enum"] == [name]
        assert "type" in variant["required"]
        assert variant["additionalProperties"] is False
        if registry.get(name).params is not None:
            params = resolve(spec, variant["properties"]["params"])
            declared = set(registry.get(name).params().fields)
            assert set(params["properties"]) == declared, name
    batch = resolve(spec, spec["paths"]["/api/ai-jobs/batch"]["post"]["requestBody"]["content"][
        "application/json"
    ]["schema"])  # fmt: skip
    assert batch["properties"]["jobs"]["items"]["discriminator"] == schema["discriminator"]


def test_a_job_body_valid_by_the_document_is_accepted(client, headers, spec):
    variant = resolve(spec, {"$ref": "#/components/schemas/JobCreate_pricing_recalculate"})
    params = resolve(spec, variant["properties"]["params"])
    assert "skus" in params["properties"]
    assert params["required"] == ["marketplace"]
    create_product(client, headers, sku="ONEOF-1")
    without = {"type": "pricing_recalculate", "params": {"skus": ["ONEOF-1"]}}
    response = client.post("/api/ai-jobs", json=without, headers=headers)
    assert response.status_code == 422  # as the document says: marketplace is required
    with_it = {"type": "pricing_recalculate", "params": {"marketplace": "amazon"}}
    response = client.post("/api/ai-jobs", json=with_it, headers=headers)
    assert response.status_code == 201, response.get_json()


def test_fields_pattern_matches_exactly_what_parse_fields_accepts():
    names = ("id", "sku", "title")
    pattern = re.compile(fields_pattern(names))
    for value in ["", "id", " sku , title ", ",,", "sku,", "title,,id", "id\n"]:
        assert pattern.search(value), value
        parse_fields(value, names)
    for value in ["ids", "sku title", "nope", "id,nope", "i d"]:
        assert not pattern.search(value), value
        with pytest.raises(Exception):  # noqa: B017 (ApiError VALIDATION_ERROR)
            parse_fields(value, names)


def test_every_fields_parameter_has_a_pattern(spec):
    found = 0
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if parameter.get("name") == "fields":
                    found += 1
                    assert "pattern" in parameter["schema"], (method, path)
    assert found >= 15
    products = spec["paths"]["/api/products"]["get"]["parameters"]
    pattern = next(p for p in products if p["name"] == "fields")["schema"]["pattern"]
    for name in product_services.PRODUCT_FIELDS:
        assert re.search(pattern, name)
    assert not re.search(pattern, "listings")  # the detail has it, the list does not


def test_strict_decimals_document_their_places_and_strings_their_nul_rule(spec):
    create = spec["components"]["schemas"]["ProductCreate"]["properties"]
    assert create["cost_price"]["multipleOf"] == 0.01
    assert create["weight_kg"]["multipleOf"] == 0.001
    assert create["title"]["pattern"] == "^[^\\x00]*$"
    errors = spec["components"]["schemas"]["BulkError"]["properties"]
    assert errors["sku"]["type"] == errors["order_id"]["type"] == ["string", "null"]


def test_every_patch_documents_the_empty_patch(spec):
    patches = [(p, item["patch"]) for p, item in spec["paths"].items() if "patch" in item]
    assert len(patches) >= 4
    for path, operation in patches:
        assert operation["requestBody"]["required"] is True, path
        assert "EMPTY_PATCH" in operation["responses"]["400"]["description"], path
        body = resolve(spec, operation["requestBody"]["content"]["application/json"]["schema"])
        assert body["minProperties"] == 1, path


@pytest.mark.parametrize("raw", [None, b"{}"])
def test_an_empty_patch_is_400_and_changes_nothing(client, headers, raw):
    before = create_product(client, headers, sku="EMPTY-1")
    kwargs = {} if raw is None else {"data": raw, "content_type": "application/json"}
    response = client.patch("/api/products/EMPTY-1", headers=headers, **kwargs)
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "EMPTY_PATCH"
    after = client.get("/api/products/EMPTY-1", headers=headers).get_json()["data"]
    assert after["updated_at"] == before["updated_at"]


def test_an_empty_patch_of_a_webhook_is_400(client, headers):
    response = client.patch("/api/webhooks/whk_nothing", headers=headers, json={})
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "EMPTY_PATCH"


def test_an_over_long_request_line_is_414_in_the_envelope(client, headers):
    response = client.get("/api/products?search=" + "a" * limits.MAX_REQUEST_LINE, headers=headers)
    assert response.status_code == 414
    assert response.mimetype == "application/json"
    error = response.get_json()["error"]
    assert error["code"] == "URI_TOO_LONG"
    assert error["details"]["max_bytes"] == limits.MAX_REQUEST_LINE
    # just under the limit is answered by the API as usual
    assert client.get("/api/products?limit=1", headers=headers).status_code == 200


def test_an_over_long_header_is_431_in_the_envelope(client, headers):
    big = {**headers, "X-Big": "b" * limits.MAX_HEADER_FIELD_SIZE}
    response = client.get("/api/products", headers=big)
    assert response.status_code == 431
    assert response.get_json()["error"]["code"] == "HEADERS_TOO_LARGE"
    assert response.get_json()["error"]["details"]["header"] == "X-Big"


def test_too_many_headers_is_431_and_creates_nothing(client, headers):
    many = {**headers, **{f"X-H{i}": "1" for i in range(limits.MAX_HEADER_FIELDS)}}
    response = client.post("/api/products", headers=many, json={"sku": "HDR-1", "title": "Headers"})
    assert response.status_code == 431
    assert response.get_json()["error"]["details"] == {"max_fields": limits.MAX_HEADER_FIELDS}
    assert client.get("/api/products/HDR-1", headers=headers).status_code == 404


def test_gunicorn_limits_are_above_the_apps(spec):
    options = gunicorn_options("127.0.0.1:0", 1)
    assert options["limit_request_fields"] > limits.MAX_HEADER_FIELDS
    assert options["limit_request_field_size"] > limits.MAX_HEADER_FIELD_SIZE
    line = options["limit_request_line"]
    assert line == 0 or line > limits.MAX_REQUEST_LINE
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            assert "URI_TOO_LONG" in operation["responses"]["414"]["description"], (method, path)
            assert "HEADERS_TOO_LARGE" in operation["responses"]["431"]["description"]


def test_allow_names_only_the_resources_own_methods(client, headers):
    # /api/ai-jobs/batch also matches /api/ai-jobs/<job_id> (GET, DELETE): not its methods
    options = client.open("/api/ai-jobs/batch", method="OPTIONS", headers=headers)
    assert options.headers["Allow"] == "POST, OPTIONS"
    refused = client.put("/api/products/bulk", headers=headers, json={"updates": []})
    assert refused.status_code == 405
    assert refused.headers["Allow"] == "POST, OPTIONS"
    assert refused.get_json()["error"]["details"]["allowed_methods"] == ["POST", "OPTIONS"]


def test_a_null_bulk_item_fails_alone(client, headers):
    create_product(client, headers, sku="NULL-1")
    body = {"updates": [None, {"sku": "NULL-1", "title": "Renamed"}]}
    response = client.post("/api/products/bulk", headers=headers, json=body)
    assert response.status_code == 200
    result = response.get_json()["data"]
    assert result["updated"] == 1 and result["failed"] == 1
    assert result["errors"][0]["index"] == 0 and result["errors"][0]["sku"] is None
