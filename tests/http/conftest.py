"""The OpenAPI document the app serves, for the tests of the document."""

import pytest

from tests.support.documented import DocumentedResponses


@pytest.fixture
def spec(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    return response.get_json()


@pytest.fixture(autouse=True)
def documented_responses(request):
    """Every answer a test of this folder gets is checked against its documentation
    (``tests/support/documented.py``); a mismatch fails the test."""
    if "app" not in request.fixturenames:
        yield None
        return
    app = request.getfixturevalue("app")
    with app.test_client() as client:
        document = client.get("/api/openapi.json").get_json()
    with DocumentedResponses(app, document) as recorder:
        yield recorder
    assert not recorder.mismatches, "\n".join(recorder.mismatches)
