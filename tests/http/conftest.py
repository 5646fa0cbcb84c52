"""The OpenAPI document the app serves, for the tests of the document."""

import pytest


@pytest.fixture
def spec(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    return response.get_json()
