"""Encrypt the marketplace API tokens stored in plain text (as crypto.py stores secrets; a
frozen copy of its format in migrations/frozen.py)."""

from commerce_api.migrations.frozen import SECRET_PREFIX, SecretBox


def up(migrator, db):
    box = SecretBox(db, [("marketplace_connection", "api_token")])
    cursor = db.execute_sql(
        "SELECT id, api_token FROM marketplace_connection WHERE api_token IS NOT NULL"
    )
    for connection_id, token in cursor.fetchall():
        if not token.startswith(SECRET_PREFIX):
            db.execute_sql(
                f"UPDATE marketplace_connection SET api_token = {db.param} WHERE id = {db.param}",
                (box.encrypt(token), connection_id),
            )
