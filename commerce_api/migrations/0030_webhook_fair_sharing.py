"""Webhook fair sharing and the failing-endpoint cut-off (issue 21).

- ``webhook_endpoint.failing_since``: when the endpoint's unbroken run of failed attempts
  began (NULL: its last attempt succeeded, or none failed yet).
- ``webhook_delivery_endpoint_due``: an endpoint's due deliveries in claim order (the claim
  takes endpoints in turn, a few deliveries each, and finds the endpoints with pending
  deliveries by a loose scan of this index's first column).
- ``webhook_delivery_leased``: the deliveries under a lease (what is in flight, per
  endpoint and by which worker), a few rows however long the backlog.
"""


def up(migrator, db):
    columns = {column.name for column in db.get_columns("webhook_endpoint")}
    if "failing_since" not in columns:
        db.execute_sql('ALTER TABLE "webhook_endpoint" ADD COLUMN "failing_since" BIGINT')
    db.execute_sql(
        'CREATE INDEX IF NOT EXISTS "webhook_delivery_endpoint_due" ON "webhook_delivery"'
        ' ("endpoint_id", "next_attempt_at", "event_seq") WHERE "status" = \'pending\''
    )
    db.execute_sql(
        'CREATE INDEX IF NOT EXISTS "webhook_delivery_leased" ON "webhook_delivery"'
        ' ("lease_until") WHERE "status" = \'pending\' AND "lease_until" IS NOT NULL'
    )
