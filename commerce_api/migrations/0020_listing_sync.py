"""Listings keep a desired state and how far the marketplace has caught up (DESIGN 9).

New columns: ``stock_buffer``, ``sync_status`` (in_sync, pending, error), ``version`` and
``synced_version``, ``last_sync_error``, ``next_push_at``, ``push_failures`` and the push
lease (``lease_until``, ``lease_token``, ``pushing_version``). The push service finds due
listings through a partial index on the pending ones. Plain SQL on both engines: the
migration does not depend on the live model.
"""

COLUMNS = (
    ("stock_buffer", "INTEGER NOT NULL DEFAULT 0"),
    ("sync_status", "VARCHAR(16) NOT NULL DEFAULT 'in_sync'"),
    ("version", "INTEGER NOT NULL DEFAULT 0"),
    ("synced_version", "INTEGER NOT NULL DEFAULT 0"),
    ("last_sync_error", "TEXT"),
    ("next_push_at", "BIGINT"),
    ("push_failures", "INTEGER NOT NULL DEFAULT 0"),
    ("lease_until", "BIGINT"),
    ("lease_token", "VARCHAR(80)"),
    ("pushing_version", "INTEGER"),
)


def up(migrator, db):
    present = {column.name for column in db.get_columns("listing")}
    for name, declaration in COLUMNS:
        if name not in present:
            db.execute_sql(f'ALTER TABLE "listing" ADD COLUMN "{name}" {declaration}')
    db.execute_sql(
        'CREATE INDEX IF NOT EXISTS "listing_pending" ON "listing" ("next_push_at", "tenant_id")'
        """ WHERE "sync_status" = 'pending'"""
    )
