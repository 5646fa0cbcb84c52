"""Marketplace notifications (DESIGN 13): ``marketplace_notification`` (each notification
taken, once per connection and event id) and ``order_pull_request`` (the durable queue of
orders to pull now, one row per connection and order, claimed under a lease).

Plain SQL on both engines; no live model is imported.
"""

from commerce_api.db import is_postgres


def up(migrator, db):
    key = "SERIAL" if is_postgres(db) else "INTEGER"
    db.execute_sql(
        'CREATE TABLE IF NOT EXISTS "marketplace_notification" ('
        f'"id" {key} NOT NULL PRIMARY KEY, '
        '"tenant_id" VARCHAR(64) NOT NULL REFERENCES "tenant" ("id") ON DELETE CASCADE, '
        '"connection_id" VARCHAR(64) NOT NULL'
        ' REFERENCES "marketplace_connection" ("id") ON DELETE CASCADE, '
        '"event_id" VARCHAR(200) NOT NULL, '
        '"topic" VARCHAR(64) NOT NULL, '
        '"order_ids" TEXT NOT NULL, '
        '"received_at" BIGINT NOT NULL)'
    )
    db.execute_sql(
        'CREATE TABLE IF NOT EXISTS "order_pull_request" ('
        f'"id" {key} NOT NULL PRIMARY KEY, '
        '"tenant_id" VARCHAR(64) NOT NULL REFERENCES "tenant" ("id") ON DELETE CASCADE, '
        '"connection_id" VARCHAR(64) NOT NULL'
        ' REFERENCES "marketplace_connection" ("id") ON DELETE CASCADE, '
        '"external_order_id" VARCHAR(200) NOT NULL, '
        '"topic" VARCHAR(64) NOT NULL, '
        '"requested" INTEGER NOT NULL, '
        '"due_at" BIGINT NOT NULL, '
        '"attempts" INTEGER NOT NULL, '
        '"lease_until" BIGINT, '
        '"holder" VARCHAR(255), '
        '"last_error" TEXT, '
        '"notified_at" BIGINT NOT NULL, '
        '"created_at" BIGINT NOT NULL)'
    )
    for statement in (
        'CREATE UNIQUE INDEX IF NOT EXISTS "marketplace_notification_connection_event"'
        ' ON "marketplace_notification" ("connection_id", "event_id")',
        'CREATE UNIQUE INDEX IF NOT EXISTS "order_pull_request_connection_order"'
        ' ON "order_pull_request" ("connection_id", "external_order_id")',
        'CREATE INDEX IF NOT EXISTS "order_pull_request_due_at" ON "order_pull_request" ("due_at")',
        'CREATE INDEX IF NOT EXISTS "marketplace_notification_tenant"'
        ' ON "marketplace_notification" ("tenant_id")',
        'CREATE INDEX IF NOT EXISTS "order_pull_request_tenant"'
        ' ON "order_pull_request" ("tenant_id")',
    ):
        db.execute_sql(statement)
