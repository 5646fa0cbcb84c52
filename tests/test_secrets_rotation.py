"""Webhook secrets and stored idempotent responses are encrypted at rest, and
COMMERCE_SECRET_KEY rotates: a comma list (the first encrypts, all decrypt) and
``commerce-api secrets rotate``."""

import importlib
import json
import os

import pytest

from commerce_api import crypto
from commerce_api.cli import cli
from commerce_api.db import db, sqlite_file
from commerce_api.webhooks.models import WebhookEndpoint
from tests.support import dbutil
from tests.support.dbutil import BASE_URL
from tests.support.factories import headers_for
from tests.support.orders_support import connect

HOOK_URL = "http://127.0.0.1:9/hook"
BODY = {"url": HOOK_URL, "events": ["*"]}


def _stored_everywhere(database):
    """Every row of every table, as text (what a dump of the database would show)."""
    text = []
    for table in database.get_tables():
        rows = database.execute_sql(f'SELECT * FROM "{table}"').fetchall()
        text.append(f"{table}: {rows!r}")
    return "\n".join(text)


def _file_bytes(database):
    """The SQLite file and its WAL, as bytes (b"" on PostgreSQL)."""
    path = sqlite_file(database)
    if not path:
        return b""
    data = b""
    for name in (path, f"{path}-wal"):
        if os.path.exists(name):
            with open(name, "rb") as handle:
                data += handle.read()
    return data


def _idempotent_post(client, headers, path, key, body=None):
    return client.post(path, json=body, headers={**headers, "Idempotency-Key": key})


@pytest.fixture
def fresh_app(make_app, tmp_path):
    """An app on a database of its own (no pages left by other tests in the file)."""
    url = dbutil.create_database(BASE_URL, str(tmp_path))
    dbutil.migrate(url)
    app = make_app(DATABASE_URL=url, WEBHOOK_ALLOW_PRIVATE_TARGETS=True)
    yield app
    dbutil.drop_app_database(app, BASE_URL, url)


def test_no_webhook_secret_is_stored_in_plain_text(fresh_app):
    from tests.support.factories import make_tenant

    client = fresh_app.test_client()
    with fresh_app.app_context():
        headers = headers_for(make_tenant())
    created = _idempotent_post(client, headers, "/api/webhooks", "k-create", BODY)
    assert created.status_code == 201
    secret = created.get_json()["data"]["secret"]
    assert secret.startswith("whsec_")
    replay = _idempotent_post(client, headers, "/api/webhooks", "k-create", BODY)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.get_json()["data"]["secret"] is None  # a secret is shown once
    path = f"/api/webhooks/{created.get_json()['data']['id']}/rotate-secret"
    rotated = _idempotent_post(client, headers, path, "k-rotate")
    assert rotated.status_code == 200
    new_secret = rotated.get_json()["data"]["secret"]
    assert new_secret != secret
    replayed = _idempotent_post(client, headers, path, "k-rotate").get_json()
    assert replayed == {"data": {**rotated.get_json()["data"], "secret": None}}
    second = _idempotent_post(client, headers, path, "k-rotate-2").get_json()["data"]["secret"]

    database = fresh_app.extensions["commerce"]["database"]
    with fresh_app.app_context(), database.connection_context():
        endpoint = WebhookEndpoint.get()
        assert (endpoint.secret, endpoint.previous_secret) == (second, new_secret)
        stored = _stored_everywhere(database)
    assert "whsec_" not in stored
    for value in (secret, new_secret, second):
        assert value.removeprefix("whsec_") not in stored
    assert stored.count("fernet:") >= 5  # secret, previous secret, 3 idempotent responses
    assert b"whsec_" not in _file_bytes(database)


def _with_keys(app, monkeypatch, setting):
    monkeypatch.setitem(app.config, "WEBHOOK_ALLOW_PRIVATE_TARGETS", True)
    monkeypatch.setitem(app.config, "SECRET_KEY", setting)


def test_rotating_the_secret_key_end_to_end(app, client, tenant, monkeypatch):
    _with_keys(app, monkeypatch, "old key")
    headers = headers_for(tenant)
    created = _idempotent_post(client, headers, "/api/webhooks", "k1", BODY)
    secret = created.get_json()["data"]["secret"]
    with app.app_context():
        connection = connect(
            tenant, "mirakl", "http", base_url="http://127.0.0.1:9", api_token="tok-rot"
        )

    def readable():
        with app.app_context():
            endpoint = WebhookEndpoint.get()
            token = type(connection).get_by_id(connection.id).api_token
        replay = _idempotent_post(client, headers, "/api/webhooks", "k1", BODY)
        return endpoint.secret, token, replay

    # a new key first, the old one second: everything still decrypts, new writes use the new
    _with_keys(app, monkeypatch, "new key, old key")
    found, token, replay = readable()
    assert (found, token) == (secret, "tok-rot")
    assert replay.status_code == 201 and replay.get_json()["data"]["secret"] is None

    # without the old key before the rotation: a clear failure, never a silent null
    _with_keys(app, monkeypatch, "new key")
    with app.app_context(), pytest.raises(crypto.SecretUnreadable):
        WebhookEndpoint.get()
    refused = _idempotent_post(client, headers, "/api/webhooks", "k1", BODY)
    assert refused.status_code == 503
    assert refused.get_json()["error"]["code"] == "SECRET_KEY_MISMATCH"

    _with_keys(app, monkeypatch, "new key,old key")
    result = app.test_cli_runner().invoke(cli, ["secrets", "rotate", "--json"])
    assert result.exit_code == 0, result.output
    counts = json.loads(result.output)
    assert counts["rotated"]["webhook_endpoint.secret"] == 1
    assert counts["rotated"]["marketplace_connection.api_token"] == 1
    assert counts["rotated"]["idempotency_record.response_body"] == 1

    # after the rotation the old key can go
    _with_keys(app, monkeypatch, "new key")
    found, token, replay = readable()
    assert (found, token) == (secret, "tok-rot")
    assert replay.status_code == 201 and replay.get_json()["data"]["secret"] is None
    # and the old key alone no longer reads anything: every value was re-encrypted
    _with_keys(app, monkeypatch, "old key")
    with app.app_context(), pytest.raises(crypto.SecretUnreadable):
        WebhookEndpoint.get()


def test_rotate_fails_clearly_when_a_value_has_no_key(app, tenant, monkeypatch):
    _with_keys(app, monkeypatch, "lost key")
    with app.app_context():
        connect(tenant, "mirakl", "http", base_url="http://127.0.0.1:9", api_token="tok")
    _with_keys(app, monkeypatch, "new key")
    result = app.test_cli_runner().invoke(cli, ["secrets", "rotate"])
    assert result.exit_code != 0
    assert "cannot be decrypted" in result.output


def test_the_migration_encrypts_plain_webhook_secrets_and_stored_responses(
    app, client, tenant, monkeypatch
):
    monkeypatch.setitem(app.config, "WEBHOOK_ALLOW_PRIVATE_TARGETS", True)
    headers = headers_for(tenant)
    created = _idempotent_post(client, headers, "/api/webhooks", "k2", BODY)
    data = created.get_json()["data"]
    with app.app_context():
        # the rows as an older version stored them: plain text
        p = db.param
        db.execute_sql(
            f"UPDATE webhook_endpoint SET secret = {p}, previous_secret = {p}",
            (data["secret"], "whsec_b2xk"),
        )
        db.execute_sql(
            f"UPDATE idempotency_record SET response_body = {p}", (json.dumps({"data": data}),)
        )
        migration = importlib.import_module("commerce_api.migrations.0025_encrypt_secrets")
        migration.up(None, db)
        migration.up(None, db)  # idempotent: an encrypted value is left alone
        assert "whsec_" not in _stored_everywhere(db)
        endpoint = WebhookEndpoint.get()
        assert (endpoint.secret, endpoint.previous_secret) == (data["secret"], "whsec_b2xk")
    replay = _idempotent_post(client, headers, "/api/webhooks", "k2", BODY)
    # stored by an older version (before secrets were withheld from stored answers)
    assert replay.status_code == 201 and replay.get_json()["data"]["secret"] == data["secret"]


def test_rotate_never_overwrites_a_secret_changed_while_it_runs(app, client, tenant, monkeypatch):
    _with_keys(app, monkeypatch, "new key,old key")
    headers = headers_for(tenant)
    created = client.post("/api/webhooks", json=BODY, headers=headers).get_json()["data"]
    real = crypto.reencrypt
    changed = []

    def reencrypt_while_the_secret_is_rotated(stored):
        if not changed:  # another process rotates the webhook's secret now
            changed.append(crypto.encrypt("whsec_bmV3ZXI="))
            db.execute_sql(
                f"UPDATE webhook_endpoint SET secret = {db.param} WHERE id = {db.param}",
                (changed[0], created["id"]),
            )
        return real(stored)

    monkeypatch.setattr(crypto, "reencrypt", reencrypt_while_the_secret_is_rotated)
    with app.app_context():
        counts = crypto.rotate_all()
        assert WebhookEndpoint.get_by_id(created["id"]).secret == "whsec_bmV3ZXI="
    assert counts["webhook_endpoint.secret"] == 0  # read, then found changed: left alone
