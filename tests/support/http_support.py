"""The HTTP contract in tests: the error envelope, a refused request that changes nothing,
every documented /api rule, and whether Redis is there for the rate-limit tests."""

import re

import pytest

from .factories import snapshot


def error_code(response):
    body = response.get_json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert isinstance(body["error"]["details"], dict)
    assert body["error"]["message"]
    return body["error"]["code"]


def assert_refused(client, method, path, headers, status, code, **kwargs):
    """The request gets ``status``/``code`` and changes nothing."""
    before = snapshot()
    response = client.open(path, method=method, headers=headers, **kwargs)
    assert response.status_code == status, response.get_json()
    assert error_code(response) == code
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["X-Request-ID"]
    assert snapshot() == before
    return response.get_json()["error"]


def api_rules(app):
    """(rule, method) of every /api endpoint documented by flask-smorest (with _apidoc)."""
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        view = app.view_functions[rule.endpoint]
        view_class = getattr(view, "view_class", None)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            handler = getattr(view_class, method.lower(), None) if view_class else view
            if getattr(handler, "_apidoc", None) is not None:
                yield rule, method


def concrete_path(rule):
    path = rule.rule
    for argument in rule.arguments:
        path = re.sub(rf"<(?:[^:<>]+:)?{argument}>", "X-1", path)
    return path


def _redis_available():
    try:
        import redis

        return redis.Redis(host="127.0.0.1", port=6379, socket_timeout=0.5).ping()
    except Exception:
        return False


redis_only = pytest.mark.skipif(not _redis_available(), reason="no Redis on 127.0.0.1:6379")
