"""The outbox loses ``event_tenant_id``: ``event_tenant_id_created_at`` starts with the
same column, so it serves any lookup by tenant, and every event (the worker writes one per
job) paid a B-tree insert for nothing. ``event_fanned_out_at`` stays whole: the fan-out
claims by ``IS NULL`` and the retention purge by ``fanned_out_at <`` a cut-off."""


def up(migrator, db):
    db.execute_sql('DROP INDEX IF EXISTS "event_tenant_id"')
