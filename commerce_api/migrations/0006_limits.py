"""Rate-limit counters and idempotency records."""

from peewee import BigIntegerField, CharField, CompositeKey, IntegerField, TextField

from commerce_api.migrations.frozen import Frozen

# One row per caller, rewritten by every request: on SQLite without a rowid (one b-tree,
# one page per write); on PostgreSQL UNLOGGED (no WAL, so commits don't wait for a flush;
# the counters are simply empty after a crash), with half of each page left free so that
# the updates stay HOT (in-page) and the dead versions are pruned as they go.
COUNTER_COLUMNS = """(
    counter_key VARCHAR(255) NOT NULL PRIMARY KEY,
    minute_window BIGINT NOT NULL,
    minute_count INTEGER NOT NULL,
    hour_window BIGINT NOT NULL,
    hour_count INTEGER NOT NULL
)"""


# The table as this migration creates it, frozen: see migrations/frozen.py.


class IdempotencyRecord(Frozen):
    tenant_id = CharField(max_length=36)
    principal = CharField()
    idempotency_key = CharField()
    fingerprint = CharField(max_length=64)
    state = CharField(max_length=12)
    lock_token = CharField(max_length=32, null=True)
    status_code = IntegerField(null=True)
    response_headers = TextField(null=True)
    response_body = TextField(null=True)
    created_at = BigIntegerField()
    locked_at = BigIntegerField()
    expires_at = BigIntegerField(index=True)

    class Meta:
        table_name = "idempotency_record"
        primary_key = CompositeKey("tenant_id", "principal", "idempotency_key")


def up(migrator, db):
    from commerce_api.db import is_postgres

    if is_postgres(db):
        db.execute_sql(
            "CREATE UNLOGGED TABLE IF NOT EXISTS rate_limit_counter"
            f" {COUNTER_COLUMNS} WITH (fillfactor = 50)"
        )
    else:
        db.execute_sql(
            f"CREATE TABLE IF NOT EXISTS rate_limit_counter {COUNTER_COLUMNS} WITHOUT ROWID"
        )
    with db.bind_ctx([IdempotencyRecord]):
        db.create_tables([IdempotencyRecord])
