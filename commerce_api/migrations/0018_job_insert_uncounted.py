"""The job table loses ``job_count_insert``: a job is only ever inserted queued.

The AI-jobs count (0015) is of finished jobs; ``job_count_insert`` counted a job inserted
already finished, which never happens: every job enters the table through one statement,
``jobs/enqueue.insert_sql``, whose status is the literal ``'queued'`` (a test fails if
another insert of a job appears). On SQLite the trigger still ran a trigger program on
every dispatch, the queue's hottest write, to find that out: ~7 us of a ~100 us INSERT and
commit. The moves into and out of a terminal status (``job_count_status`` on SQLite,
``job_count_finish``/``job_count_reopen`` on PostgreSQL) and deletes stay counted.
"""


def up(migrator, db):
    from commerce_api.db import is_postgres

    if is_postgres(db):
        db.execute_sql("DROP TRIGGER IF EXISTS job_count_insert ON job")
        db.execute_sql("DROP FUNCTION IF EXISTS job_count_insert()")
    else:
        db.execute_sql("DROP TRIGGER IF EXISTS job_count_insert")
