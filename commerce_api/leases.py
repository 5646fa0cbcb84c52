"""The one leased-claim mechanism: jobs, webhook deliveries and listing pushes all use it.

A queue is a table whose due rows are *claimed* under a lease: the claim marks them held
(a holder: a worker id or a lease token, and a lease that runs out at an epoch-ms moment)
in one statement, so concurrent workers take different rows:

- PostgreSQL: the due rows are selected ``FOR UPDATE SKIP LOCKED`` in a materialized CTE
  (it runs the locking SELECT exactly once; as an ``IN (subquery)`` the planner may re-run
  it per row, and with SKIP LOCKED each run finds others), then updated from it;
- SQLite: ``UPDATE ... WHERE <key> IN (<due> LIMIT n) AND <still claimable> RETURNING``
  inside the caller's write transaction (``BEGIN IMMEDIATE``: claims are serialized).

A holder *renews* its lease while it works, *gives back* what it will not do (the lease is
cleared, no attempt spent), and a lease that ran out is *expired*: the row is claimable
again (webhook deliveries, listings) or swept (jobs). A failed attempt is retried after a
*backoff*: exponential, capped, with optional jitter, and a ``Retry-After`` the other side
gave honoured within bounds. Each queue keeps its own numbers as parameters.

Every statement is a ``sql.Statement``: rendered once per engine, names from the model.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import peewee
from peewee import Case

from .db import is_postgres
from .sql import Statement


class Lease:
    """The leased claim of one model: its claim statement, renew, give back, expiry.

    ``lease`` and ``holder`` name the fields of the lease's end (epoch ms) and of who holds
    it. The claim is made of templates in ``sql.Statement`` form, naming the model as
    ``{<Model class name>}`` (``models``: other models they name):

    - ``due``: the condition of a claimable row;
    - ``order``: the claim order; ``setting``: the SET clause of the claim; ``claimable``:
      the condition the row must still meet when it is updated; ``returning``: the
      fields the claim returns, in order;
    - ``source`` / ``select``: the due query's FROM and selected key (default the table
      and its primary key; with an alias, e.g. ``{WebhookDelivery} d`` /
      ``d.{WebhookDelivery.id}``);
    - ``by_rowid``: on SQLite, the due rows are taken by rowid (the table's own key: no
      lookup through the id index per claimed row).
    """

    def __init__(
        self,
        model: type[peewee.Model],
        *,
        lease: str,
        holder: str,
        due: str,
        order: str,
        setting: str,
        claimable: str,
        returning: Sequence[str],
        source: str | None = None,
        select: str | None = None,
        by_rowid: bool = False,
        models: dict[str, type[peewee.Model]] | None = None,
    ) -> None:
        self.model = model
        self.lease = lease
        self.holder = holder
        name = model.__name__
        named = {name: model, **(models or {})}
        table, key = _ref(name), _ref(name, model._meta.primary_key.name)
        source = source or table
        select = select or key
        # the templates name their parameters (``{p:name}``), the claim's limit is ``limit``
        due_query = f"{source} WHERE {due} ORDER BY {order} LIMIT {{p:limit}}"
        returned = ", ".join(_ref(name, field) for field in returning)
        qualified = ", ".join(table + "." + _ref(name, field) for field in returning)
        self._postgres = Statement(
            f"WITH due AS MATERIALIZED (SELECT {select} FROM {due_query} FOR UPDATE SKIP LOCKED)"
            f" UPDATE {table} SET {setting} FROM due WHERE {table}.{key} = due.{key}"
            f" AND {claimable} RETURNING {qualified}",
            **named,
        )
        if by_rowid:
            select, key = "rowid", "rowid"
        self._sqlite = Statement(
            f"UPDATE {table} SET {setting} WHERE {key} IN (SELECT {select} FROM {due_query})"
            f" AND {claimable} RETURNING {returned}",
            **named,
        )

    @property
    def statements(self) -> tuple[Statement, Statement]:
        """The claim's statements: PostgreSQL's and SQLite's."""
        return self._postgres, self._sqlite

    def claim(self, params: Mapping[str, Any]) -> list[tuple]:
        """Claim: the rows as ``returning`` gives them. Call it inside the caller's write
        transaction. ``params`` maps every name of the templates (``limit`` among them),
        the same on both engines."""
        statement = self._postgres if is_postgres() else self._sqlite
        return statement.execute(params).fetchall()

    # the lease's states -------------------------------------------------------------------

    def free(self, prefix: str = "") -> str:
        """The SQL condition (``{p:now}``) of a row no lease holds: never leased, or
        its lease ran out (a holder that died or hung leaves it to be claimed again)."""
        return lease_free(prefix + self.column(self.lease))

    def expired(self, now: int) -> peewee.Expression:
        """A held row whose lease ran out before ``now`` (the sweep's condition)."""
        return getattr(self.model, self.lease) < now

    def released(self) -> str:
        """The SET clause giving a lease back: no lease, no holder."""
        return f"{self.column(self.lease)} = NULL, {self.column(self.holder)} = NULL"

    def column(self, field: str) -> str:
        return _ref(self.model.__name__, field)

    # renew, give back ---------------------------------------------------------------------

    def renew(
        self,
        keys: Iterable[Any],
        holder: Any,
        until: int,
        *,
        held: peewee.Expression | None = None,
        cap: str | None = None,
        returning: Sequence[str] = ("id",),
    ) -> list[tuple]:
        """Extend to ``until`` the leases ``holder`` has of the rows ``keys`` (and still
        ``held``, when given), never past the row's ``cap`` field; the ``returning`` of
        those renewed. Call it inside the caller's write transaction."""
        model = self.model
        value: Any = until
        if cap is not None:
            bound = getattr(model, cap)
            value = Case(None, [(bound < until, bound)], until)
        fence = model._meta.primary_key.in_(list(keys)) & (getattr(model, self.holder) == holder)
        query = (
            model.update({getattr(model, self.lease): value})
            .where(fence if held is None else fence & held)
            .returning(*(getattr(model, name) for name in returning))
        )
        return list(query.tuples().execute())

    def release(self, fence: peewee.Expression, values: dict[str, Any] | None = None) -> int:
        """Give back the lease of the row(s) ``fence`` selects (the holder's own): no lease,
        no holder, and ``values``, what else the queue resets (back to the queue after a
        backoff, or with the attempt not spent). Returns the rows changed."""
        changes = {self.holder: None, self.lease: None, **(values or {})}
        return self.model.update(**changes).where(fence).execute()


class DueProbe:
    """A read-only look of a queue: is any row due? (``due``: a condition in
    ``sql.Statement`` form whose one parameter is ``{p:now}``.) An idle worker asks it
    before it claims, so that it never takes SQLite's write lock for nothing."""

    def __init__(self, model: type[peewee.Model], due: str) -> None:
        self.statement = Statement(
            f"SELECT 1 FROM {_ref(model.__name__)} WHERE {due} LIMIT 1", **{model.__name__: model}
        )

    def __call__(self, now: int) -> bool:
        return self.statement.execute({"now": now}).fetchone() is not None


def lease_free(column: str) -> str:
    """The SQL condition (``{p:now}``) that the lease ending in ``column`` holds nothing:
    never leased, or it ran out."""
    return f"({column} IS NULL OR {column} < {{p:now}})"


def _ref(*names: str) -> str:
    """A ``sql.Statement`` reference: ``{Model}`` or ``{Model.field}``."""
    return "{" + ".".join(names) + "}"


# Retry backoff -----------------------------------------------------------------------------


def backoff_seconds(attempt: int, base: float, cap: float) -> float:
    """Exponential: ``base``, 2 x ``base``, 4 x ``base``... for attempts 1, 2, 3..., at
    most ``cap`` seconds."""
    return min(cap, base * 2 ** max(0, attempt - 1))


def honour_retry_after(
    delay: float,
    retry_after: float | None,
    *,
    cap: float,
    minimum: float = 0.0,
    shortens: bool = False,
) -> float:
    """``delay`` with the other side's ``Retry-After`` (seconds, None: not given) taken
    into account, bounded to ``[minimum, cap]``: it replaces the delay when it
    ``shortens``, else it is a floor (never sooner than asked, never faster than ``delay``)."""
    if retry_after is None:
        return delay
    asked = min(max(float(retry_after), minimum), cap)
    return asked if shortens else max(delay, asked)


def delay_ms(seconds: float, jitter: float = 0.0) -> int:
    """``seconds`` in milliseconds, plus up to ``jitter`` (a share) at random."""
    if jitter:
        return int(seconds * 1000 * (1 + random.random() * jitter))
    return int(seconds * 1000)
