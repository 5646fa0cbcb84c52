"""Transfers between warehouses (DESIGN 14): ``transfer``, ``transfer_line``, and
``stock.incoming`` (what is in transit into a stock row's warehouse).

Plain SQL on both engines; no live model is imported.
"""

TABLES = (
    'CREATE TABLE IF NOT EXISTS "transfer" ('
    '"id" VARCHAR(40) NOT NULL PRIMARY KEY, '
    '"tenant_id" VARCHAR(36) NOT NULL REFERENCES "tenant" ("id") ON DELETE CASCADE, '
    '"from_warehouse_id" VARCHAR(40) NOT NULL REFERENCES "warehouse" ("id") ON DELETE CASCADE, '
    '"to_warehouse_id" VARCHAR(40) NOT NULL REFERENCES "warehouse" ("id") ON DELETE CASCADE, '
    '"status" VARCHAR(16) NOT NULL, '
    '"reference" VARCHAR(200), '
    '"created_by" VARCHAR(320), '
    '"created_at" BIGINT NOT NULL, '
    '"updated_at" BIGINT NOT NULL, '
    '"shipped_at" BIGINT, '
    '"received_at" BIGINT, '
    '"cancelled_at" BIGINT)',
    'CREATE TABLE IF NOT EXISTS "transfer_line" ('
    '"id" VARCHAR(40) NOT NULL PRIMARY KEY, '
    '"transfer_id" VARCHAR(40) NOT NULL REFERENCES "transfer" ("id") ON DELETE CASCADE, '
    '"tenant_id" VARCHAR(36) NOT NULL REFERENCES "tenant" ("id") ON DELETE CASCADE, '
    '"product_id" VARCHAR(40) NOT NULL REFERENCES "product" ("id") ON DELETE CASCADE, '
    '"sku" VARCHAR(64) NOT NULL, '
    '"position" INTEGER NOT NULL, '
    '"quantity" BIGINT NOT NULL, '
    '"received_quantity" BIGINT NOT NULL DEFAULT 0, '
    '"returned_quantity" BIGINT NOT NULL DEFAULT 0)',
)
INDEXES = (
    'CREATE INDEX IF NOT EXISTS "transfer_tenant_created" ON "transfer"'
    ' ("tenant_id", "created_at", "id")',
    'CREATE INDEX IF NOT EXISTS "transfer_tenant_status_created" ON "transfer"'
    ' ("tenant_id", "status", "created_at", "id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "transfer_line_transfer_product" ON "transfer_line"'
    ' ("transfer_id", "product_id")',
    'CREATE INDEX IF NOT EXISTS "transfer_line_tenant_sku" ON "transfer_line"'
    ' ("tenant_id", "sku", "transfer_id")',
)


def up(migrator, db):
    for statement in TABLES + INDEXES:
        db.execute_sql(statement)
    columns = {column.name for column in db.get_columns("stock")}
    if "incoming" not in columns:
        db.execute_sql('ALTER TABLE "stock" ADD COLUMN "incoming" BIGINT NOT NULL DEFAULT 0')
