"""``job_fair_tail``: a tenant's last queued claim key per priority (fair claiming). It
also serves the capacity count, so the queued-jobs index on ``tenant_id`` alone goes (one
index entry per dispatch, as before)."""


def up(migrator, db):
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS job_fair_tail ON job (tenant_id, priority_rank, claim_key)"
        " WHERE status = 'queued'"
    )
    db.execute_sql("DROP INDEX IF EXISTS job_tenant_id")
