"""``list_count``: per-tenant row counts of the big lists, kept in the writing transaction.

A list's ``total`` over 100,000 rows took a COUNT of every row (about 10 ms on SQLite),
remembered only while nothing at all was written. Triggers now keep a count per (tenant,
list, status) in the same transaction as the rows, so the unfiltered and status-filtered
totals are one indexed read (``commerce_api/totals.py``). Counted:

- products by status; orders by status; inventory records by status; pricing
  recommendations by status;
- finished AI jobs (not internal ones) under status ``''``: only a job's move into (or out
  of) a terminal status counts, so dispatch and claim write no count at all (dispatch
  is the queue's hottest write). The live ones, queued or running, are few (the queue
  capacity bounds them) and are counted from the queue's own partial indexes.

SQLite has one writer at a time, so its triggers add to the count rows directly. On
PostgreSQL concurrent writers of one tenant would queue on (and could deadlock over) the
same count rows, so statement-level triggers append signed deltas to ``list_count_delta``
(insert-only, no lock), readers add them up, and a periodic task folds them into
``list_count`` (``totals.compact``).
"""

COUNTED = (
    # (table, key column, list kind); counted by their status column
    ("product", "id", "products"),
    ('"order"', "id", "orders"),
    ("inventory_summary", "product_id", "inventory"),
    ("pricing_recommendation", "id", "pricing_recommendations"),
)
FINISHED = "('completed', 'failed', 'cancelled')"  # jobs.models.TERMINAL_STATUSES
JOB_CONDITION = "NOT {row}internal AND {row}status IN " + FINISHED


def _upsert(row, kind, status, n):
    """SQLite: add ``n`` to the count of ``row``'s tenant (a statement of a trigger body)."""
    return (
        "INSERT INTO list_count (tenant_id, kind, status, n) VALUES "
        f"({row}.tenant_id, '{kind}', {status}, {n}) "
        "ON CONFLICT (tenant_id, kind, status) DO UPDATE SET n = n + excluded.n;"
    )


def _sqlite(db, table, name, kind):
    for event, row, n in (("insert", "NEW", 1), ("delete", "OLD", -1)):
        db.execute_sql(
            f"CREATE TRIGGER {name}_count_{event} AFTER {event.upper()} ON {table} "
            f"BEGIN {_upsert(row, kind, row + '.status', n)} END"
        )
    db.execute_sql(
        f"CREATE TRIGGER {name}_count_update AFTER UPDATE OF status, tenant_id ON {table} "
        "WHEN OLD.status IS NOT NEW.status OR OLD.tenant_id IS NOT NEW.tenant_id "
        f"BEGIN {_upsert('OLD', kind, 'OLD.status', -1)} {_upsert('NEW', kind, 'NEW.status', 1)}"
        " END"
    )


def _postgres(db, table, key, name, kind):
    def trigger(event, body):
        db.execute_sql(
            f"CREATE FUNCTION {name}_count_{event}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN INSERT INTO list_count_delta (tenant_id, kind, status, n) "
            f"{body}; RETURN NULL; END $$"
        )
        transition = {
            "insert": "NEW TABLE AS new_rows",
            "delete": "OLD TABLE AS old_rows",
            "update": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        }[event]
        db.execute_sql(
            f"CREATE TRIGGER {name}_count_{event} AFTER {event.upper()} ON {table} "
            f"REFERENCING {transition} FOR EACH STATEMENT "
            f"EXECUTE FUNCTION {name}_count_{event}()"
        )

    for event, rows, sign in (("insert", "new_rows", ""), ("delete", "old_rows", "-")):
        trigger(
            event,
            f"SELECT tenant_id, '{kind}', status, {sign}COUNT(*) FROM {rows} "
            "GROUP BY tenant_id, status",
        )
    changed = (
        f"FROM old_rows o JOIN new_rows w ON w.{key} = o.{key} "
        "WHERE o.status IS DISTINCT FROM w.status OR o.tenant_id <> w.tenant_id"
    )
    trigger(
        "update",
        f"SELECT tenant_id, '{kind}', s, SUM(n) FROM ("
        f"SELECT o.tenant_id, o.status AS s, -1 AS n {changed} UNION ALL "
        f"SELECT w.tenant_id, w.status, 1 {changed}"
        ") d GROUP BY tenant_id, s HAVING SUM(n) <> 0",
    )


def _job_sqlite(db):
    def add(row, n):
        return _upsert(row, "ai_jobs", "''", n)

    for event, row, n in (("insert", "NEW", 1), ("delete", "OLD", -1)):
        db.execute_sql(
            f"CREATE TRIGGER job_count_{event} AFTER {event.upper()} ON job "
            f"WHEN {JOB_CONDITION.format(row=row + '.')} BEGIN {add(row, n)} END"
        )
    for name, old, new, n in (("finish", "NOT IN", "IN", 1), ("reopen", "IN", "NOT IN", -1)):
        db.execute_sql(
            f"CREATE TRIGGER job_count_{name} AFTER UPDATE OF status ON job "
            f"WHEN NOT NEW.internal AND OLD.status {old} {FINISHED} "
            f"AND NEW.status {new} {FINISHED} BEGIN {add('NEW', n)} END"
        )


def _job_postgres(db):
    # row-level with WHEN: the claim, heartbeats and progress updates run no trigger at all
    def trigger(name, event, when, row, n):
        db.execute_sql(
            f"CREATE FUNCTION job_count_{name}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN INSERT INTO list_count_delta (tenant_id, kind, status, n) "
            f"VALUES ({row}.tenant_id, 'ai_jobs', '', {n}); RETURN NULL; END $$"
        )
        db.execute_sql(
            f"CREATE TRIGGER job_count_{name} AFTER {event} ON job FOR EACH ROW "
            f"WHEN ({when}) EXECUTE FUNCTION job_count_{name}()"
        )

    trigger("insert", "INSERT", JOB_CONDITION.format(row="NEW."), "NEW", 1)
    trigger("delete", "DELETE", JOB_CONDITION.format(row="OLD."), "OLD", -1)
    for name, old, new, n in (("finish", "NOT IN", "IN", 1), ("reopen", "IN", "NOT IN", -1)):
        trigger(
            name,
            "UPDATE OF status",
            f"NOT NEW.internal AND OLD.status {old} {FINISHED} AND NEW.status {new} {FINISHED}",
            "NEW",
            n,
        )


def up(migrator, db):
    from commerce_api.db import is_postgres

    postgres = is_postgres(db)
    db.execute_sql(
        "CREATE TABLE list_count (tenant_id VARCHAR(36) NOT NULL, kind VARCHAR(32) NOT NULL,"
        " status VARCHAR(32) NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (tenant_id, kind, status))"
    )
    if postgres:
        db.execute_sql(
            "CREATE TABLE list_count_delta (id BIGSERIAL PRIMARY KEY,"
            " tenant_id VARCHAR(36) NOT NULL, kind VARCHAR(32) NOT NULL,"
            " status VARCHAR(32) NOT NULL, n BIGINT NOT NULL)"
        )
        db.execute_sql(
            "CREATE INDEX list_count_delta_list ON list_count_delta (tenant_id, kind, status)"
        )
    for table, key, kind in COUNTED:
        name = table.strip('"')
        db.execute_sql(
            "INSERT INTO list_count (tenant_id, kind, status, n) "
            f"SELECT tenant_id, '{kind}', status, COUNT(*) FROM {table} GROUP BY tenant_id, status"
        )
        if postgres:
            _postgres(db, table, key, name, kind)
        else:
            _sqlite(db, table, name, kind)
    db.execute_sql(
        "INSERT INTO list_count (tenant_id, kind, status, n) SELECT tenant_id, 'ai_jobs', '',"
        f" COUNT(*) FROM job WHERE {JOB_CONDITION.format(row='')} GROUP BY tenant_id"
    )
    (_job_postgres if postgres else _job_sqlite)(db)
