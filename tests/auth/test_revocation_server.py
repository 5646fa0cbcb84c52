"""Key and plan changes are in force on the very next request, on every server process."""

import pytest

from commerce_api.auth.services import revoke_key, set_plan, update_key
from commerce_api.timeutil import now_ms
from tests.support.auth_support import burst, codes
from tests.support.factories import auth_headers, make_key, make_tenant
from tests.support.servers import gunicorn_server


@pytest.mark.slow
def test_every_change_takes_effect_on_the_next_request(app, database_url):
    tenant = make_tenant("starter")
    keys = {name: make_key(tenant) for name in ("revoke", "expire", "scopes", "ips", "plan")}
    headers = {name: auth_headers(tenant, secret) for name, (_, secret) in keys.items()}
    with gunicorn_server(database_url, workers=2, RATE_LIMIT_ENABLED=1) as base:
        for name in keys:
            assert codes(burst(base, headers[name], 8)) == {(200, None)}  # cached everywhere

        revoke_key(keys["revoke"][0].id)
        answers = burst(base, headers["revoke"])
        assert codes(answers) == {(401, "UNAUTHENTICATED")}
        assert {r.json()["error"]["details"]["reason"] for r in answers} == {"revoked"}

        update_key(keys["expire"][0].id, expires_at=now_ms() - 1)
        answers = burst(base, headers["expire"])
        assert {r.json()["error"]["details"]["reason"] for r in answers} == {"expired"}

        update_key(keys["scopes"][0].id, scopes=["orders:read"])
        assert codes(burst(base, headers["scopes"])) == {(403, "INSUFFICIENT_SCOPE")}

        update_key(keys["ips"][0].id, allowed_ips=["192.0.2.0/24"])
        assert codes(burst(base, headers["ips"])) == {(403, "IP_NOT_ALLOWED")}
        update_key(keys["ips"][0].id, allowed_ips=None)
        assert codes(burst(base, headers["ips"], 8)) == {(200, None)}

        before = burst(base, headers["plan"], 4)
        assert {r.headers["X-RateLimit-Limit"] for r in before} == {"60"}
        set_plan(tenant.id, "growth")
        after = burst(base, headers["plan"], 8)
        assert {r.headers["X-RateLimit-Limit"] for r in after} == {"300"}
