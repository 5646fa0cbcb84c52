"""SQLite: one trigger instead of two for a job's move into or out of a terminal status.

``job_count_finish`` and ``job_count_reopen`` (0015) both ran on every ``UPDATE OF status``
of the job table, each as a trigger program of its own, though at most one of them counts
anything: the worker's claim (queued -> running) and its completion paid for two programs
per job, about 4 us each. ``job_count_status`` adds +1 or -1 in one program, under the same
condition. PostgreSQL keeps its row triggers: its ``WHEN`` is checked before a trigger
function is called, so a claim calls none.
"""

FINISHED = "('completed', 'failed', 'cancelled')"  # jobs.models.TERMINAL_STATUSES


def up(migrator, db):
    from commerce_api.db import is_postgres

    if is_postgres(db):
        return
    db.execute_sql("DROP TRIGGER IF EXISTS job_count_finish")
    db.execute_sql("DROP TRIGGER IF EXISTS job_count_reopen")
    db.execute_sql(
        "CREATE TRIGGER job_count_status AFTER UPDATE OF status ON job "
        f"WHEN NOT NEW.internal AND (OLD.status IN {FINISHED}) <> (NEW.status IN {FINISHED}) "
        "BEGIN INSERT INTO list_count (tenant_id, kind, status, n) VALUES "
        f"(NEW.tenant_id, 'ai_jobs', '', CASE WHEN NEW.status IN {FINISHED} THEN 1 ELSE -1 END) "
        "ON CONFLICT (tenant_id, kind, status) DO UPDATE SET n = n + excluded.n; END"
    )
