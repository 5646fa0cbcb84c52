"""Settings over HTTP and the daily look-ups (DESIGN section 10).

- ``api_key.last_used_at``: when the key last authenticated a request (epoch ms, written
  at most once a minute per key).
- Indexes behind the new filters: orders by ``external_order_id`` (the unique index starts
  with the marketplace, which the filter does not give; led by the order number because
  the look-up reads it without the tenant-first indexes, see ``orders/reading.py``);
  products by ``category`` in the list's default order; the
  tenant-wide ledger (``GET /api/inventory/adjustments``) newest first; the events feed
  filtered by ``type`` (a rare type would otherwise walk the tenant's whole retention).

Plain SQL on both engines; no live model is imported.
"""

INDEXES = (
    'CREATE INDEX IF NOT EXISTS "order_external_tenant" ON "order" (external_order_id, tenant_id)',
    'CREATE INDEX IF NOT EXISTS "product_tenant_category" ON "product"'
    " (tenant_id, category, created_at, id)",
    'CREATE INDEX IF NOT EXISTS "adjustment_tenant_created" ON "adjustment"'
    " (tenant_id, created_at, id)",
    'CREATE INDEX IF NOT EXISTS "event_tenant_type_created" ON "event"'
    " (tenant_id, type, created_at)",
)


def up(migrator, db):
    columns = {column.name for column in db.get_columns("api_key")}
    if "last_used_at" not in columns:
        db.execute_sql('ALTER TABLE "api_key" ADD COLUMN last_used_at BIGINT')
    for statement in INDEXES:
        db.execute_sql(statement)
