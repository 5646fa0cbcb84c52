"""Rate-limit counters and idempotency records."""

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


def up(migrator, db):
    from commerce_api.db import is_postgres
    from commerce_api.http.idempotency import IdempotencyRecord

    if is_postgres(db):
        db.execute_sql(
            "CREATE UNLOGGED TABLE IF NOT EXISTS rate_limit_counter"
            f" {COUNTER_COLUMNS} WITH (fillfactor = 50)"
        )
    else:
        db.execute_sql(
            f"CREATE TABLE IF NOT EXISTS rate_limit_counter {COUNTER_COLUMNS} WITHOUT ROWID"
        )
    db.create_tables([IdempotencyRecord])
