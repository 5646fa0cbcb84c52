"""``/metrics`` holds against what an unauthenticated client sends (issue 31): invented
method names add no series, and a token with non-ASCII characters is a 401, not a 500."""

import pytest

from commerce_api import create_app
from commerce_api.db import db
from tests.support.health_support import scrape


@pytest.fixture
def restore_db(app):
    """Apps built inside a test rebind the database proxy; give the test's back after."""
    yield
    db.initialize(app.extensions["commerce"]["database"])


KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


def _methods(text):
    requests = scrape(text)["commerce_http_requests"]
    return {dict(labels)["method"] for _, labels in requests}, requests


def test_invented_method_names_share_one_series(app, base_config, restore_db):
    client = create_app({**base_config, "METRICS_ENABLED": True}).test_client()
    for number in range(30):
        response = client.open("/api/products", method=f"BREW{number}")
        assert response.status_code < 500
    methods, requests = _methods(client.get("/metrics").get_data(as_text=True))
    assert methods <= KNOWN_METHODS | {"other"}
    other = sum(
        value
        for (sample, labels), value in requests.items()
        if sample.endswith("_total") and dict(labels)["method"] == "other"
    )
    assert other >= 30


@pytest.mark.parametrize("given", ["é", "s3cret€", "\u00ff" * 40, "ü s3cret"])
def test_a_non_ascii_metrics_token_is_refused_not_a_crash(app, base_config, restore_db, given):
    guarded = create_app({**base_config, "METRICS_ENABLED": True, "METRICS_TOKEN": "s3cret"})
    client = guarded.test_client()
    refused = client.get("/metrics", headers={"Authorization": f"Bearer {given}"})
    assert refused.status_code == 401
    assert refused.get_json()["error"]["code"] == "UNAUTHENTICATED"
    assert client.get("/metrics", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_a_non_ascii_configured_token_works(app, base_config, restore_db):
    guarded = create_app({**base_config, "METRICS_ENABLED": True, "METRICS_TOKEN": "clé"})
    client = guarded.test_client()
    wire = "clé".encode().decode("latin-1")  # the UTF-8 bytes as WSGI hands them over
    assert client.get("/metrics", headers={"Authorization": f"Bearer {wire}"}).status_code == 200
    assert client.get("/metrics", headers={"Authorization": "Bearer cle"}).status_code == 401
