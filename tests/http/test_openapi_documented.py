"""The check every test of tests/http runs (``tests/support/documented.py``) finds an
answer its documentation does not describe: it is not a check that cannot fail."""

import copy

import pytest

from commerce_api.http.blueprint import Blueprint
from tests.support.documented import DocumentedResponses


def _answers(app, client, headers, spec):
    with DocumentedResponses(app, spec) as recorder:
        client.post("/api/products", json={"sku": "MUG-1", "title": "Mug"}, headers=headers)
        client.get("/api/products", headers=headers)
        client.get("/api/products/NONE", headers=headers)
        client.get("/api/exports/products.csv", headers=headers).get_data()
    return recorder


def test_the_documented_answers_pass(app, client, headers, spec):
    recorder = _answers(app, client, headers, spec)
    assert recorder.mismatches == []
    assert recorder.checked == 4


def test_an_undocumented_status_a_wrong_body_and_media_type_are_found(app, client, headers, spec):
    changed = copy.deepcopy(spec)
    del changed["paths"]["/api/products/{sku}"]["get"]["responses"]["404"]
    listing = changed["paths"]["/api/products"]["get"]["responses"]["200"]
    listing["content"]["application/json"]["schema"] = {"type": "object", "required": ["nope"]}
    export = changed["paths"]["/api/exports/products.csv"]["get"]["responses"]["200"]
    export["content"] = {"application/json": {"schema": {}}}
    recorder = _answers(app, client, headers, changed)
    assert [m.split(":")[0] for m in recorder.mismatches] == [
        "GET /api/products -> 200",
        "GET /api/products/{sku} -> 404",
        "GET /api/exports/products.csv -> 200",
    ], recorder.mismatches
    assert "'nope' is a required property" in recorder.mismatches[0]
    assert "status not documented" in recorder.mismatches[1]


def test_an_error_code_its_status_does_not_list_is_found(app, client, headers, spec):
    changed = copy.deepcopy(spec)
    missing = changed["paths"]["/api/products/{sku}"]["get"]["responses"]["404"]
    missing["description"] = missing["description"].replace("`PRODUCT_NOT_FOUND`", "")
    recorder = _answers(app, client, headers, changed)
    assert recorder.mismatches == [
        "GET /api/products/{sku} -> 404: error code PRODUCT_NOT_FOUND not documented"
    ]


def test_a_streamed_file_documented_without_its_media_type_is_found(app, client, headers, spec):
    changed = copy.deepcopy(spec)
    del changed["paths"]["/api/exports/products.csv"]["get"]["responses"]["200"]["content"]
    recorder = _answers(app, client, headers, changed)
    assert recorder.mismatches == [
        "GET /api/exports/products.csv -> 200: text/csv answered, [] documented"
    ]


def test_the_blueprint_refuses_a_serializing_response_wrapper():
    with pytest.raises(TypeError, match="blp.returns"):
        Blueprint("t", __name__).response(200)
