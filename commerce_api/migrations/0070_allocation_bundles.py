"""Stock the way sellers run it (DESIGN 14): allocation per listing and bundles.

- ``listing``: ``max_quantity`` (a cap), ``allocation_pct`` (1-100), ``fixed_quantity``
  and ``warehouse_ids`` (a JSON list of own warehouse ids; NULL: every active own one).
- ``bundle_component``: the components of a bundle product (one row per component, with
  its quantity per bundle); found by bundle and by component (a component's change marks
  the bundles that use it pending).

Plain SQL on both engines; no live model is imported.
"""

from commerce_api.db import is_postgres

COLUMNS = (
    ("max_quantity", "INTEGER"),
    ("allocation_pct", "INTEGER NOT NULL DEFAULT 100"),
    ("fixed_quantity", "INTEGER"),
    ("warehouse_ids", "TEXT"),
)


def up(migrator, db):
    present = {column.name for column in db.get_columns("listing")}
    for name, declaration in COLUMNS:
        if name not in present:
            db.execute_sql(f'ALTER TABLE "listing" ADD COLUMN "{name}" {declaration}')
    key = "SERIAL" if is_postgres(db) else "INTEGER"
    db.execute_sql(
        'CREATE TABLE IF NOT EXISTS "bundle_component" ('
        f'"id" {key} NOT NULL PRIMARY KEY, '
        '"tenant_id" VARCHAR(36) NOT NULL REFERENCES "tenant" ("id") ON DELETE CASCADE, '
        '"bundle_id" VARCHAR(40) NOT NULL REFERENCES "product" ("id") ON DELETE CASCADE, '
        '"component_id" VARCHAR(40) NOT NULL REFERENCES "product" ("id") ON DELETE CASCADE, '
        '"sku" VARCHAR(64) NOT NULL, '
        '"quantity" INTEGER NOT NULL, '
        '"created_at" BIGINT NOT NULL)'
    )
    db.execute_sql(
        'CREATE UNIQUE INDEX IF NOT EXISTS "bundle_component_bundle_id_component_id"'
        ' ON "bundle_component" ("bundle_id", "component_id")'
    )
    db.execute_sql(
        'CREATE INDEX IF NOT EXISTS "bundle_component_component_id"'
        ' ON "bundle_component" ("component_id")'
    )
