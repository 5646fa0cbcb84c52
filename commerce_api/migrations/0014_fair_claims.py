"""``job_fair_tail``: a tenant's last queued claim key per priority (fair claiming)."""


def up(migrator, db):
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS job_fair_tail ON job (tenant_id, priority_rank, claim_key)"
        " WHERE status = 'queued'"
    )
