"""Marketplace API tokens are encrypted at rest and still reach the marketplace."""

import importlib

import pytest

from commerce_api import crypto
from commerce_api.db import db
from commerce_api.marketplaces.models import MarketplaceConnection
from tests.support.orders_support import connect


def stored_token(connection_id):
    cursor = db.execute_sql(
        f"SELECT api_token FROM marketplace_connection WHERE id = {db.param}", (connection_id,)
    )
    return cursor.fetchone()[0]


def test_the_token_is_stored_encrypted_and_read_back_plain(app, tenant):
    with app.app_context():
        connection = connect(
            tenant, "mirakl", "http", base_url="http://127.0.0.1:9", api_token="tok-secret-123"
        )
        raw = stored_token(connection.id)
        assert raw.startswith("fernet:") and "tok-secret-123" not in raw
        assert MarketplaceConnection.get_by_id(connection.id).api_token == "tok-secret-123"


def test_the_api_never_shows_the_token(client, headers, tenant):
    response = client.post(
        "/api/marketplaces",
        json={"marketplace": "ebay", "connector": "sandbox"},
        headers=headers,
    )
    assert response.status_code == 201
    with client.application.app_context():
        connect(tenant, "mirakl", "http", base_url="http://127.0.0.1:9", api_token="tok-x")
    listed = client.get("/api/marketplaces", headers=headers).get_data(as_text=True)
    assert "tok-x" not in listed and "fernet:" not in listed
    assert '"has_api_token":true' in listed.replace(" ", "")


def test_a_secret_key_setting_is_used_and_another_key_cannot_read_it(app, tenant, monkeypatch):
    with app.app_context():
        monkeypatch.setitem(app.config, "SECRET_KEY", "first key")
        connection = connect(
            tenant, "mirakl", "http", base_url="http://127.0.0.1:9", api_token="tok-1"
        )
        assert MarketplaceConnection.get_by_id(connection.id).api_token == "tok-1"
        monkeypatch.setitem(app.config, "SECRET_KEY", "another key")
        # never a silent None: the operator changed a key that is still needed (the row
        # reads; its token fails where it is used)
        token = MarketplaceConnection.get_by_id(connection.id).api_token
        assert isinstance(token, crypto.UnreadableSecret) and token
        with pytest.raises(crypto.SecretUnreadable):
            crypto.readable(token)
        with pytest.raises(crypto.SecretUnreadable):
            f"Bearer {token}"
        assert crypto.decrypt("plain-old-token") == "plain-old-token"


def test_the_migration_encrypts_tokens_stored_in_plain_text(app, tenant):
    with app.app_context():
        connection = connect(
            tenant, "mirakl", "http", base_url="http://127.0.0.1:9", api_token="tok-2"
        )
        db.execute_sql(
            f"UPDATE marketplace_connection SET api_token = {db.param} WHERE id = {db.param}",
            ("tok-plain", connection.id),
        )
        migration = importlib.import_module("commerce_api.migrations.0012_encrypt_tokens")
        migration.up(None, db)
        migration.up(None, db)  # idempotent: an encrypted token is left alone
        assert stored_token(connection.id).startswith("fernet:")
        assert MarketplaceConnection.get_by_id(connection.id).api_token == "tok-plain"
