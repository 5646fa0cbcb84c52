"""``operation_claim``: the lease a shipment, cancellation or price apply holds on its order
or recommendation while it calls the marketplace (claim before push, DESIGN 9)."""


def up(migrator, db):
    db.execute_sql(
        'CREATE TABLE IF NOT EXISTS "operation_claim" ('
        '"resource_id" VARCHAR(255) NOT NULL PRIMARY KEY, '
        '"tenant_id" VARCHAR(255) NOT NULL, '
        '"operation" VARCHAR(255) NOT NULL, '
        '"token" VARCHAR(255) NOT NULL, '
        '"expires_at" BIGINT NOT NULL, '
        '"created_at" BIGINT NOT NULL)'
    )
