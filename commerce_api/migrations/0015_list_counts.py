"""``list_count``: per-tenant row counts of the big lists, kept in the writing transaction.

A list's ``total`` over 100,000 rows took a COUNT of every row (about 10 ms on SQLite),
remembered only while nothing at all was written. Triggers now keep a count per (tenant,
list, status) in the same transaction as the rows, so the unfiltered and status-filtered
totals are one indexed read (``commerce_api/totals.py``). Counted:

- products by status; orders by status; inventory records by status; pricing
  recommendations by status;
- AI jobs (not internal ones) under status ``''``: a job changes status several times and
  the worker's claim must stay cheap, so only inserts and deletes count.

SQLite has one writer at a time, so its triggers add to the count rows directly. On
PostgreSQL concurrent writers of one tenant would queue on (and could deadlock over) the
same count rows, so statement-level triggers append signed deltas to ``list_count_delta``
(insert-only, no lock), readers add them up, and a periodic task folds them into
``list_count`` (``totals.compact``).
"""

COUNTED = (
    # (table, key column, list kind, status column or None, row condition or None)
    ("product", "id", "products", "status", None),
    ('"order"', "id", "orders", "status", None),
    ("inventory_summary", "product_id", "inventory", "status", None),
    ("pricing_recommendation", "id", "pricing_recommendations", "status", None),
    ("job", "id", "ai_jobs", None, "NOT {row}internal"),
)


def _status(row, status):
    return f"{row}{status}" if status else "''"


def _group(status):
    return f"tenant_id, {status}" if status else "tenant_id"


def _where(condition, row=""):
    return f"WHERE {condition.format(row=row)}" if condition else ""


def _sqlite(db, table, name, kind, status, condition):
    def add(row, n):
        return (
            "INSERT INTO list_count (tenant_id, kind, status, n) VALUES "
            f"({row}.tenant_id, '{kind}', {_status(row + '.', status)}, {n}) "
            "ON CONFLICT (tenant_id, kind, status) DO UPDATE SET n = n + excluded.n;"
        )

    def when(row):
        return f" WHEN {condition.format(row=row + '.')}" if condition else ""

    db.execute_sql(
        f"CREATE TRIGGER {name}_count_insert AFTER INSERT ON {table}{when('NEW')} "
        f"BEGIN {add('NEW', 1)} END"
    )
    db.execute_sql(
        f"CREATE TRIGGER {name}_count_delete AFTER DELETE ON {table}{when('OLD')} "
        f"BEGIN {add('OLD', -1)} END"
    )
    if status:
        db.execute_sql(
            f"CREATE TRIGGER {name}_count_update AFTER UPDATE OF {status}, tenant_id ON {table} "
            f"WHEN OLD.{status} IS NOT NEW.{status} OR OLD.tenant_id IS NOT NEW.tenant_id "
            f"BEGIN {add('OLD', -1)} {add('NEW', 1)} END"
        )


def _postgres(db, table, key, name, kind, status, condition):
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
            f"SELECT tenant_id, '{kind}', {_status('', status)}, {sign}COUNT(*) "
            f"FROM {rows} {_where(condition)} GROUP BY {_group(status)}",
        )
    if status:
        changed = (
            f"FROM old_rows o JOIN new_rows w ON w.{key} = o.{key} "
            f"WHERE o.{status} IS DISTINCT FROM w.{status} OR o.tenant_id <> w.tenant_id"
        )
        trigger(
            "update",
            f"SELECT tenant_id, '{kind}', s, SUM(n) FROM ("
            f"SELECT o.tenant_id, o.{status} AS s, -1 AS n {changed} UNION ALL "
            f"SELECT w.tenant_id, w.{status}, 1 {changed}"
            ") d GROUP BY tenant_id, s HAVING SUM(n) <> 0",
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
    for table, key, kind, status, condition in COUNTED:
        name = table.strip('"')
        db.execute_sql(
            "INSERT INTO list_count (tenant_id, kind, status, n) "
            f"SELECT tenant_id, '{kind}', {_status('', status)}, COUNT(*) FROM {table} "
            f"{_where(condition)} GROUP BY {_group(status)}"
        )
        if postgres:
            _postgres(db, table, key, name, kind, status, condition)
        else:
            _sqlite(db, table, name, kind, status, condition)
