"""The pipeline end to end: health, auth, one product round trip."""

from .factories import create_product


def test_health_needs_no_auth(client):
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "ok" and body["version"]
    assert response.headers["X-Request-ID"]


def test_product_round_trip(client, headers):
    product = create_product(client, headers, sku="MUG-1")
    response = client.get("/api/products/MUG-1", headers=headers)
    assert response.status_code == 200
    assert response.get_json()["data"]["id"] == product["id"]
    listed = client.get("/api/products", headers=headers).get_json()
    assert [p["sku"] for p in listed["data"]] == ["MUG-1"]
    assert listed["meta"] == {"total": 1, "page": 1, "limit": 50, "nextCursor": None}
