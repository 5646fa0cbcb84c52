"""A list's ``total``: maintained counts for the big lists, a bounded count for the rest.

Triggers (migration 0015) keep ``list_count`` rows per (tenant, list, status) in the same
transaction as the rows they count, so the total of an unfiltered or status-filtered list
is one indexed read, whatever else was written. Any other filter (a search, a marketplace,
a date range) is counted by SQL, but over at most ``LIST_COUNT_CAP`` matching rows: past
the cap ``total`` is ``null`` (the pages and cursors are unaffected).

On PostgreSQL the triggers append deltas (no row lock, so writers of one tenant never queue
on a count), readers add them to the folded counts, and ``compact`` (a periodic task of the
worker fleet) folds them in.
"""

from collections.abc import Callable, Sequence
from typing import Any

import peewee

from .config import current_config
from .db import db, is_postgres

# the lists whose totals are maintained (migration 0015)
MAINTAINED = ("products", "orders", "inventory", "pricing_recommendations", "ai_jobs")

# kind -> a function of the tenant giving ``(sql, params)``: a SQL term added to the
# maintained count in the same statement (``register_extra``)
_EXTRA: dict[str, Callable[[str], tuple[str, Sequence[Any]]]] = {}
DEFAULT_CAP = 10_000
_COMPACT_LOCK = 0x4C43_4E54  # pg advisory lock key of the fold ("LCNT")


def register_extra(kind: str, extra: Callable[[str], tuple[str, Sequence[Any]]]) -> None:
    """Count more rows into ``kind``'s totals: ``extra(tenant_id)`` gives a SQL
    term (`` + (SELECT COUNT(*) ...)``) and its parameters, added to the maintained count
    in the same statement. The jobs package adds its live jobs to ``ai_jobs`` this way."""
    _EXTRA[kind] = extra


def registered_extras() -> tuple[Callable, ...]:
    """The extra count terms registered (the worker's self-check)."""
    return tuple(_EXTRA.values())


def maintained(
    tenant_id: str, kind: str, status: str | None = None, exclude: Sequence[str] = ()
) -> int:
    """The exact count of tenant ``tenant_id``'s ``kind`` rows: of ``status`` when given,
    else of every status except those in ``exclude``, plus the kind's registered extra.
    (``ai_jobs``: every public job.)"""
    if kind not in MAINTAINED:
        raise ValueError(f"no maintained count for {kind!r}")
    p = db.obj.param
    where, params = f"tenant_id = {p} AND kind = {p}", [tenant_id, kind]
    if status is not None:
        where += f" AND status = {p}"
        params.append(status)
    elif exclude:
        where += f" AND status NOT IN ({', '.join([p] * len(exclude))})"
        params.extend(exclude)
    if is_postgres():
        sql = (
            f"SELECT (SELECT COALESCE(SUM(n), 0) FROM (SELECT n FROM list_count WHERE {where}"
            f" UNION ALL SELECT n FROM list_count_delta WHERE {where}) AS counted)"
        )
        params = params * 2
    else:
        sql = f"SELECT (SELECT COALESCE(SUM(n), 0) FROM list_count WHERE {where})"
    extra = _EXTRA.get(kind)
    if extra is not None:  # one statement, one snapshot: a job finishing is counted once
        term, more = extra(tenant_id)
        sql += term
        params = [*params, *more]
    return int(db.execute_sql(sql, params).fetchone()[0])


def count_cap() -> int:
    cap = current_config().get("LIST_COUNT_CAP", DEFAULT_CAP)
    return int(DEFAULT_CAP if cap is None else cap)


def bounded(query: peewee.SelectQuery) -> int | None:
    """COUNT of ``query``'s rows over at most the cap (+1): None past the cap; 0 = no cap."""
    cap = count_cap()
    query = query.order_by()
    if cap <= 0:
        return query.count()
    count = query.limit(cap + 1).count()
    return None if count > cap else count


def compact() -> int:
    """Fold PostgreSQL's count deltas into ``list_count`` (one fold at a time across the
    fleet); returns the number of deltas folded. SQLite has none."""
    if not is_postgres():
        return 0
    with db.atomic():
        locked = db.execute_sql("SELECT pg_try_advisory_xact_lock(%s)", (_COMPACT_LOCK,))
        if not locked.fetchone()[0]:
            return 0
        cursor = db.execute_sql(
            "WITH moved AS (DELETE FROM list_count_delta RETURNING tenant_id, kind, status, n),"
            " folded AS (INSERT INTO list_count (tenant_id, kind, status, n)"
            " SELECT tenant_id, kind, status, SUM(n) FROM moved GROUP BY tenant_id, kind, status"
            " ORDER BY tenant_id, kind, status"
            " ON CONFLICT (tenant_id, kind, status) DO UPDATE SET n = list_count.n + EXCLUDED.n)"
            " SELECT COUNT(*) FROM moved"
        )
        return int(cursor.fetchone()[0])


# finished jobs by type, fleet-wide (migration 0085): kind ``jobs:<status>``, status <type>
FINISHED_JOB_KINDS = ("jobs:completed", "jobs:failed", "jobs:cancelled")


def finished_jobs() -> list[tuple[str, str, int]]:
    """``[(type, status, n)]`` of every tenant's finished jobs (completed, failed,
    cancelled; internal ones included), read from the maintained counts (the ``(kind,
    status)`` index of ``list_count``), never from the job table."""
    kinds = ", ".join(f"'{kind}'" for kind in FINISHED_JOB_KINDS)
    rows = f"SELECT kind, status, n FROM list_count WHERE kind IN ({kinds})"
    if is_postgres():
        rows += f" UNION ALL SELECT kind, status, n FROM list_count_delta WHERE kind IN ({kinds})"
    cursor = db.execute_sql(
        f"SELECT kind, status, SUM(n) FROM ({rows}) AS counted GROUP BY kind, status"
    )
    return [(job_type, kind.split(":", 1)[1], int(n)) for kind, job_type, n in cursor.fetchall()]
