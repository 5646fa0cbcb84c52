"""Real marketplaces (DESIGN 13): credentials, asynchronous acceptance, rate budgets.

- ``marketplace_connection.credentials``: the connector's secrets (Amazon's LWA client id
  and secret and refresh token), an encrypted JSON object, never shown;
  ``status_reason``: why the connection does not work now (``AUTH: ...``), or NULL;
- ``listing.submission``: a push the marketplace accepted for processing (a feed, a
  listings submission): its id and what was sent, while ``sync_status`` is ``submitted``;
  a partial index finds the submitted listings whose result is due;
- ``marketplace_rate_budget``: one token bucket per connection and operation, shared by
  every worker process (the marketplace's usage plan, fleet-wide).

Plain SQL on both engines: the migration does not depend on the live models.
"""

CONNECTION_COLUMNS = (("credentials", "TEXT"), ("status_reason", "TEXT"))


def up(migrator, db):
    present = {column.name for column in db.get_columns("marketplace_connection")}
    for name, declaration in CONNECTION_COLUMNS:
        if name not in present:
            db.execute_sql(
                f'ALTER TABLE "marketplace_connection" ADD COLUMN "{name}" {declaration}'
            )
    present = {column.name for column in db.get_columns("listing")}
    if "submission" not in present:
        db.execute_sql('ALTER TABLE "listing" ADD COLUMN "submission" TEXT')
    db.execute_sql(
        'CREATE INDEX IF NOT EXISTS "listing_submitted" ON "listing" ("next_push_at", "tenant_id")'
        """ WHERE "sync_status" = 'submitted'"""
    )
    db.execute_sql(
        'CREATE TABLE IF NOT EXISTS "marketplace_rate_budget" ('
        '"connection_id" VARCHAR(40) NOT NULL, '
        '"operation" VARCHAR(64) NOT NULL, '
        '"tokens" DOUBLE PRECISION NOT NULL, '
        '"rate" DOUBLE PRECISION NOT NULL, '
        '"burst" DOUBLE PRECISION NOT NULL, '
        '"updated_at" DOUBLE PRECISION NOT NULL, '
        'PRIMARY KEY ("connection_id", "operation"))'
    )
