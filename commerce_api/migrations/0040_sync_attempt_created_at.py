"""An index on ``sync_attempt.created_at``: the metrics scrape counts the marketplace
calls of the last hour across every tenant (health/fleet.py), which the per-tenant
indexes cannot serve without reading the whole history."""


def up(migrator, db):
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS sync_attempt_created_at ON sync_attempt (created_at)"
    )
