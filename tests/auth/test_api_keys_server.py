"""Keys changed over HTTP are in force on the very next request, on both server processes."""

import pytest
import requests

from tests.support.auth_support import burst, codes
from tests.support.factories import auth_headers, make_key, make_tenant
from tests.support.servers import gunicorn_server


@pytest.mark.slow
def test_patch_and_delete_over_http_take_effect_on_every_process(app, database_url):
    tenant = make_tenant("starter")
    scopes = ["api-keys:read", "api-keys:write", "products:read", "orders:read"]
    _, admin_secret = make_key(tenant, scopes)
    admin = auth_headers(tenant, admin_secret)
    with gunicorn_server(database_url, workers=2) as base:
        made = requests.post(
            base + "/api/api-keys",
            json={"name": "integration", "scopes": ["products:read", "orders:read"]},
            headers=admin,
            timeout=10,
        )
        assert made.status_code == 201, made.text
        key = made.json()["data"]
        headers = auth_headers(tenant, key["key"])
        # it works at once, and both processes now hold it in their cache
        assert codes(burst(base, headers, 16)) == {(200, None)}

        narrowed = requests.patch(
            f"{base}/api/api-keys/{key['id']}",
            json={"scopes": ["orders:read"]},
            headers=admin,
            timeout=10,
        )
        assert narrowed.status_code == 200, narrowed.text
        assert codes(burst(base, headers)) == {(403, "INSUFFICIENT_SCOPE")}

        revoked = requests.delete(f"{base}/api/api-keys/{key['id']}", headers=admin, timeout=10)
        assert revoked.status_code == 204
        answers = burst(base, headers)
        assert codes(answers) == {(401, "UNAUTHENTICATED")}
        assert {r.json()["error"]["details"]["reason"] for r in answers} == {"revoked"}

        listed = requests.get(base + "/api/api-keys", headers=admin, timeout=10).json()["data"]
        shown = {item["id"]: item for item in listed}[key["id"]]
        assert shown["revoked_at"] and shown["last_used_at"] and "key" not in shown
