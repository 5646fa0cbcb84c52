"""Rate-limit counters and idempotency records."""

# One row per caller, rewritten by every request: on SQLite without a rowid (one b-tree,
# one page per write); on PostgreSQL UNLOGGED (no WAL, so commits don't wait for a flush;
# the counters are simply empty after a crash).
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
        db.execute_sql(f"CREATE UNLOGGED TABLE IF NOT EXISTS rate_limit_counter {COUNTER_COLUMNS}")
    else:
        db.execute_sql(
            f"CREATE TABLE IF NOT EXISTS rate_limit_counter {COUNTER_COLUMNS} WITHOUT ROWID"
        )
    db.create_tables([IdempotencyRecord])
