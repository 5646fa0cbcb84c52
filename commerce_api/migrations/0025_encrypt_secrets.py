"""Webhook secrets and stored idempotent responses encrypted at rest (``crypto.py``).

``webhook_endpoint.secret`` and ``previous_secret`` were plain ``whsec_...`` text, and an
``Idempotency-Key`` on ``POST /api/webhooks`` or ``rotate-secret`` kept another plain copy
of the secret in ``idempotency_record.response_body`` for 24 hours. Their values are
encrypted here with the first key of ``COMMERCE_SECRET_KEY`` (a frozen copy of crypto.py's
format in migrations/frozen.py); an encrypted value is left alone, so running it twice
changes nothing. On PostgreSQL the secret columns become TEXT
(a Fernet token of a secret is longer than the old VARCHAR(100)).
"""

from commerce_api.db import is_postgres
from commerce_api.migrations.frozen import SECRET_PREFIX, SecretBox

COLUMNS = (
    ("webhook_endpoint", ("id",), "secret"),
    ("webhook_endpoint", ("id",), "previous_secret"),
    ("idempotency_record", ("tenant_id", "principal", "idempotency_key"), "response_body"),
)


def _encrypt_plain(db, box, table, keys, column):
    p = db.param
    key_list = ", ".join(keys)
    match = " AND ".join(f"{name} = {p}" for name in keys)
    rows = db.execute_sql(
        f"SELECT {key_list}, {column} FROM {table}"
        f" WHERE {column} IS NOT NULL AND {column} NOT LIKE {p}",
        (SECRET_PREFIX + "%",),
    ).fetchall()
    for row in rows:
        value = row[-1]
        if not value.startswith(SECRET_PREFIX):
            db.execute_sql(
                f"UPDATE {table} SET {column} = {p} WHERE {match}",
                (box.encrypt(value), *row[:-1]),
            )


def up(migrator, db):
    if is_postgres(db):
        db.execute_sql(
            "ALTER TABLE webhook_endpoint ALTER COLUMN secret TYPE TEXT,"
            " ALTER COLUMN previous_secret TYPE TEXT"
        )
    box = SecretBox(db, [(table, column) for table, _, column in COLUMNS])
    for table, keys, column in COLUMNS:
        _encrypt_plain(db, box, table, keys, column)
