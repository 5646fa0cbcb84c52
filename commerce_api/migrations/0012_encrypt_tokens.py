"""Encrypt the marketplace API tokens stored in plain text (commerce_api/crypto.py)."""


def up(migrator, db):
    from commerce_api.crypto import PREFIX, encrypt

    cursor = db.execute_sql(
        "SELECT id, api_token FROM marketplace_connection WHERE api_token IS NOT NULL"
    )
    for connection_id, token in cursor.fetchall():
        if not token.startswith(PREFIX):
            db.execute_sql(
                f"UPDATE marketplace_connection SET api_token = {db.param} WHERE id = {db.param}",
                (encrypt(token), connection_id),
            )
