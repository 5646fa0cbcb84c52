"""Webhooks: endpoints, deliveries, attempts; the outbox becomes claimable; ``all`` scope.

- ``event.fanned_out_at``: when the delivery service turned the event into deliveries
  (NULL: not yet). Existing events are marked as fanned out: no endpoint existed before.
- ``event.seq`` (PostgreSQL, BIGSERIAL): the outbox order; SQLite uses ``rowid``.
- Indexes for the claim of events and deliveries and for the retention purge.
- API keys created with ``--scopes all`` held the list of every scope of their day; they
  now hold ``all``, which grants every scope, present and future.
"""

# every scope there was before this migration: a key holding all of them was made with "all"
_SCOPES_BEFORE = [
    "products:read",
    "products:write",
    "orders:read",
    "orders:write",
    "inventory:read",
    "inventory:write",
    "pricing:read",
    "pricing:write",
    "ai-jobs:read",
    "ai-jobs:write",
    "webhooks:read",
    "webhooks:write",
]


def up(migrator, db):
    from peewee import PostgresqlDatabase

    from commerce_api.webhooks.models import (
        PARTIAL_INDEXES,
        WebhookAttempt,
        WebhookDelivery,
        WebhookEndpoint,
    )

    postgres = isinstance(db, PostgresqlDatabase)
    db.create_tables([WebhookEndpoint, WebhookDelivery, WebhookAttempt])
    for statement in PARTIAL_INDEXES:
        db.execute_sql(statement)

    columns = {column.name for column in db.get_columns("event")}
    if "fanned_out_at" not in columns:
        db.execute_sql('ALTER TABLE "event" ADD COLUMN "fanned_out_at" BIGINT')
        db.execute_sql('UPDATE "event" SET "fanned_out_at" = "created_at"')
    if postgres and "seq" not in columns:
        db.execute_sql('ALTER TABLE "event" ADD COLUMN "seq" BIGSERIAL')
    if postgres:
        db.execute_sql(
            'CREATE INDEX IF NOT EXISTS "event_unfanned" ON "event" ("seq")'
            ' WHERE "fanned_out_at" IS NULL'
        )
    # SQLite: NULL keys are ordered by rowid, so this one index serves the claim (IS NULL,
    # in rowid order) and the purge (fanned out before a cut-off) alike.
    db.execute_sql('CREATE INDEX IF NOT EXISTS "event_fanned_out_at" ON "event" ("fanned_out_at")')

    cursor = db.execute_sql('SELECT "id", "scopes" FROM "api_key"')
    for key_id, scopes in cursor.fetchall():
        if set(_SCOPES_BEFORE) <= set(scopes.split()):
            db.execute_sql(
                f'UPDATE "api_key" SET "scopes" = {db.param} WHERE "id" = {db.param}',
                ("all", key_id),
            )
