"""Listings by sync status (issue 36: ``GET /api/listings?sync_status=``, the console's
Overview): an index on ``listing (tenant_id, sync_status, created_at, id)`` for the
listings that are not in sync. Most listings are ``in_sync``, so the index is partial and
small, and the push service's writes of in-sync listings do not touch it.

Plain SQL on both engines; no live model is imported.
"""


def up(migrator, db):
    db.execute_sql(
        'CREATE INDEX IF NOT EXISTS "listing_unsynced" ON "listing"'
        ' ("tenant_id", "sync_status", "created_at", "id")'
        """ WHERE "sync_status" <> 'in_sync'"""
    )
