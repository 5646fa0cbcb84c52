"""Webhooks: endpoints, deliveries, attempts; the outbox becomes claimable; ``all`` scope.

- ``event.fanned_out_at``: when the delivery service turned the event into deliveries
  (NULL: not yet). Existing events are marked as fanned out: no endpoint existed before.
- ``event.seq`` (PostgreSQL, BIGSERIAL): the outbox order; SQLite uses ``rowid``.
- Indexes for the claim of events and deliveries and for the retention purge.
- API keys created with ``--scopes all`` held the list of every scope of their day; they
  now hold ``all``, which grants every scope, present and future.
"""

from peewee import (
    BigAutoField,
    BigIntegerField,
    BooleanField,
    CharField,
    IntegerField,
    TextField,
)

from commerce_api.migrations.frozen import Frozen


# The tables as this migration creates them, frozen: see migrations/frozen.py.
class WebhookEndpoint(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant_id = CharField(max_length=36)
    url = CharField(max_length=2048)
    events = TextField()
    description = TextField(null=True)
    is_active = BooleanField()
    disabled_reason = TextField(null=True)
    secret = TextField()
    previous_secret = TextField(null=True)
    previous_secret_expires_at = BigIntegerField(null=True)
    failing_since = BigIntegerField(null=True)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "webhook_endpoint"
        indexes = ((("tenant_id", "created_at"), False),)


class WebhookDelivery(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant_id = CharField(max_length=36)
    endpoint_id = CharField(max_length=40)
    event_id = CharField(max_length=40, index=True)
    event_type = CharField(max_length=64)
    resource_key = CharField(max_length=120, null=True)
    event_seq = BigIntegerField()
    status = CharField(max_length=16)
    attempt_count = IntegerField()
    next_attempt_at = BigIntegerField(null=True)
    lease_until = BigIntegerField(null=True)
    lease_token = CharField(max_length=64, null=True)
    last_status_code = IntegerField(null=True)
    last_error = TextField(null=True)
    last_duration_ms = IntegerField(null=True)
    redelivery_of = CharField(max_length=40, null=True)
    created_at = BigIntegerField()
    delivered_at = BigIntegerField(null=True)
    finished_at = BigIntegerField(null=True, index=True)

    class Meta:
        table_name = "webhook_delivery"
        indexes = ((("endpoint_id", "created_at"), False),)


class WebhookAttempt(Frozen):
    id = BigAutoField()
    delivery_id = CharField(max_length=40, index=True)
    attempted_at = BigIntegerField()
    status_code = IntegerField(null=True)
    duration_ms = IntegerField()
    error = TextField(null=True)

    class Meta:
        table_name = "webhook_attempt"


MODELS = [WebhookEndpoint, WebhookDelivery, WebhookAttempt]
PARTIAL_INDEXES = (
    # due deliveries, in the order they are claimed
    'CREATE INDEX IF NOT EXISTS "webhook_delivery_due" ON "webhook_delivery"'
    ' ("next_attempt_at", "event_seq") WHERE "status" = \'pending\'',
    # the ordering check: an earlier pending delivery of the same resource to the endpoint
    'CREATE INDEX IF NOT EXISTS "webhook_delivery_order" ON "webhook_delivery"'
    ' ("endpoint_id", "resource_key", "event_seq") WHERE "status" = \'pending\'',
)

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

    postgres = isinstance(db, PostgresqlDatabase)
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
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
