"""Finished jobs counted by type and status, for the ``commerce_jobs`` metric (issue 30).

``list_count`` (0015) already counts each tenant's finished AI jobs as one number; the
metric wants every status by type ("jobs by type and status", DESIGN 11) without a scan of
the job table at each scrape. The same mechanism now also keeps, per tenant, kind
``jobs:<status>`` and status ``<type>`` for each terminal status, internal jobs included,
so a scrape sums a few rows per tenant through an index on (kind, status).

Only a move into or out of a terminal status counts (the claim, heartbeats and progress
updates count nothing); a job is only ever inserted queued and never deleted (0018). On
SQLite one trigger program does both counts (it replaces ``job_count_status``, 0019: on
``completed_at``, so a terminal status changed to another without it would be missed; the
service never does that). On
PostgreSQL a row trigger with ``WHEN`` appends deltas to ``list_count_delta``, folded by
``totals.compact`` like the others.
"""

FINISHED = "('completed', 'failed', 'cancelled')"  # jobs.models.TERMINAL_STATUSES
KIND = "'jobs:' || {row}.status"
TYPE = "substr({row}.type, 1, 32)"  # list_count.status is VARCHAR(32); job types are shorter
MOVED = "OLD.status IS DISTINCT FROM NEW.status AND (OLD.status IN {f} OR NEW.status IN {f})"


def _sqlite_upsert(select):
    return (
        f"INSERT INTO list_count (tenant_id, kind, status, n) {select} "
        "ON CONFLICT (tenant_id, kind, status) DO UPDATE SET n = n + excluded.n;"
    )


def _sqlite(db):
    ai_jobs = _sqlite_upsert(  # 0019's count, unchanged
        "SELECT NEW.tenant_id, 'ai_jobs', '', CASE WHEN NEW.completed_at IS NULL THEN -1"
        " ELSE 1 END WHERE NOT NEW.internal"
        " AND (OLD.completed_at IS NULL) <> (NEW.completed_at IS NULL)"
    )
    by_type = [
        _sqlite_upsert(
            f"SELECT {row}.tenant_id, {KIND.format(row=row)}, {TYPE.format(row=row)}, {n}"
            f" WHERE {row}.status IN {FINISHED}"
        )
        for row, n in (("NEW", 1), ("OLD", -1))
    ]
    db.execute_sql("DROP TRIGGER IF EXISTS job_count_status")
    # on completed_at, as 0019 made it (a CHECK ties it to the terminal statuses): a
    # statement that does not set it (the claim) runs no trigger program at all
    db.execute_sql(
        "CREATE TRIGGER job_count_status AFTER UPDATE OF completed_at ON job "
        f"WHEN {MOVED.replace('IS DISTINCT FROM', 'IS NOT').format(f=FINISHED)} "
        f"BEGIN {ai_jobs} {' '.join(by_type)} END"
    )


def _postgres(db):
    db.execute_sql(
        "CREATE FUNCTION job_status_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF NEW.status IN {FINISHED} THEN INSERT INTO list_count_delta (tenant_id, kind,"
        f" status, n) VALUES (NEW.tenant_id, {KIND.format(row='NEW')},"
        f" {TYPE.format(row='NEW')}, 1); END IF; "
        f"IF OLD.status IN {FINISHED} THEN INSERT INTO list_count_delta (tenant_id, kind,"
        f" status, n) VALUES (OLD.tenant_id, {KIND.format(row='OLD')},"
        f" {TYPE.format(row='OLD')}, -1); END IF; "
        "RETURN NULL; END $$"
    )
    db.execute_sql(
        "CREATE TRIGGER job_status_count AFTER UPDATE OF status ON job FOR EACH ROW "
        f"WHEN ({MOVED.format(f=FINISHED)}) EXECUTE FUNCTION job_status_count()"
    )


def up(migrator, db):
    from commerce_api.db import is_postgres

    db.execute_sql(
        "INSERT INTO list_count (tenant_id, kind, status, n) SELECT tenant_id,"
        f" {KIND.format(row='job')}, {TYPE.format(row='job')}, COUNT(*) FROM job"
        f" WHERE status IN {FINISHED} GROUP BY tenant_id, {KIND.format(row='job')},"
        f" {TYPE.format(row='job')}"
    )
    db.execute_sql("CREATE INDEX list_count_kind ON list_count (kind, status)")
    (_postgres if is_postgres(db) else _sqlite)(db)
