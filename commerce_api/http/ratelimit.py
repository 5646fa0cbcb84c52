"""Per-key rate limits, counted once for every process and host.

Counters never slow the data they guard (DESIGN 4): on SQLite they live in a SQLite file of
their own beside the database (``<database>-ratelimit``), so a counter write neither takes
the main file's write lock nor invalidates what readers cached of it; on PostgreSQL in an
UNLOGGED table of the database, or in Redis when ``COMMERCE_REDIS_URL`` is set.

Each caller has two fixed windows aligned to the clock, the current minute and the current
hour (the ``limits`` package's fixed-window model, with its ``RateLimitItem`` limits). One
atomic statement per request counts the request in both windows, or in neither when either
window is full: a refused request changes nothing. The statement returns the counts, so the
``X-RateLimit-*`` headers cost no extra read. See docs/decisions.md, "Rate limits and
idempotency", for why this is not one of the ``limits`` strategies.
"""

import hashlib
import logging
import math
import time
import weakref
from typing import NamedTuple

from flask import Flask, Response, current_app, g
from limits import RateLimitItemPerHour, RateLimitItemPerMinute
from peewee import BigIntegerField, CharField, DatabaseError, IntegerField, SqliteDatabase

from ..auth.middleware import AuthContext
from ..db import BaseModel, create_private_file, db, is_postgres
from ..errors import ApiError
from ..filelock import Turns
from ..sql import Statement
from .ratelimit_slots import SlotFileCounter

log = logging.getLogger(__name__)

# (per minute, per hour) by plan; SPEC "Limits".
PLAN_LIMITS = {
    "starter": (RateLimitItemPerMinute(60), RateLimitItemPerHour(1_000)),
    "growth": (RateLimitItemPerMinute(300), RateLimitItemPerHour(10_000)),
    "enterprise": (RateLimitItemPerMinute(1_000), RateLimitItemPerHour(100_000)),
}
WINDOW_NAMES = ("minute", "hour")
WINDOW_SECONDS = tuple(item.get_expiry() for item in PLAN_LIMITS["starter"])  # (60, 3600)
OVERRIDE_PLAN = "enterprise"  # per-key overrides apply on this plan only
PURGE_INTERVAL_SECONDS = 300  # how often one process deletes counters of past hours
REDIS_RETRY_SECONDS = 5  # after a Redis failure, requests pass uncounted this long


# (minute, hour): window numbers, or limits
Windows = tuple[int, int]
# allowed, and ((minute window, count), (hour window, count))
Acquired = tuple[bool, tuple[tuple[int, int], tuple[int, int]]]


class RateLimitCounter(BaseModel):
    """One row per caller: the current minute and hour windows and their counts."""

    counter_key = CharField(primary_key=True, max_length=255)
    minute_window = BigIntegerField()  # Unix time // 60
    minute_count = IntegerField()
    hour_window = BigIntegerField()  # Unix time // 3600
    hour_count = IntegerField()


class Decision(NamedTuple):
    """The outcome of one request, for the window closest to running out."""

    allowed: bool
    limit: int
    remaining: int
    reset: int  # Unix time in seconds when that window resets
    window: str
    retry_after: int | None  # seconds, when refused


class CounterUnavailable(Exception):
    """The shared counter could not be reached (Redis down); the request is not counted."""


def limits_for(auth: AuthContext) -> tuple[int, int]:
    """(per minute, per hour) for the caller: the plan's, or an Enterprise key's overrides."""
    minute, hour = PLAN_LIMITS.get(auth.plan, PLAN_LIMITS["starter"])
    per_minute, per_hour = minute.amount, hour.amount
    if auth.plan == OVERRIDE_PLAN:
        # a key keeps its override columns after a downgrade; they count on Enterprise only
        per_minute = auth.rate_limit_per_minute or per_minute
        per_hour = auth.rate_limit_per_hour or per_hour
    return per_minute, per_hour


def counter_key(auth: AuthContext) -> str:
    """Per API key; per user (the JWT's sub) within the tenant whose plan applies."""
    if auth.kind == "api_key":
        return f"k:{auth.principal_id}"
    key = f"u:{auth.tenant_id}:{auth.principal_id}"
    if len(key) > 200:
        key = "u:" + hashlib.sha256(key.encode()).hexdigest()
    return key


# ``>=`` rather than ``=`` on the windows: a host whose clock lags a little counts into
# the newer window another host opened instead of resetting it.
_ACQUIRE = Statement(
    "INSERT INTO {C} AS c ({C.counter_key}, {C.minute_window}, {C.minute_count},"
    " {C.hour_window}, {C.hour_count}) VALUES ({p}, {p}, 1, {p}, 1)"
    " ON CONFLICT ({C.counter_key}) DO UPDATE SET"
    " {C.minute_count} = CASE WHEN c.{C.minute_window} >= excluded.{C.minute_window}"
    " THEN c.{C.minute_count} + 1 ELSE 1 END,"
    " {C.minute_window} = CASE WHEN c.{C.minute_window} > excluded.{C.minute_window}"
    " THEN c.{C.minute_window} ELSE excluded.{C.minute_window} END,"
    " {C.hour_count} = CASE WHEN c.{C.hour_window} >= excluded.{C.hour_window}"
    " THEN c.{C.hour_count} + 1 ELSE 1 END,"
    " {C.hour_window} = CASE WHEN c.{C.hour_window} > excluded.{C.hour_window}"
    " THEN c.{C.hour_window} ELSE excluded.{C.hour_window} END"
    " WHERE (c.{C.minute_window} < excluded.{C.minute_window} OR c.{C.minute_count} < {p})"
    " AND (c.{C.hour_window} < excluded.{C.hour_window} OR c.{C.hour_count} < {p})"
    " RETURNING {C.minute_window}, {C.minute_count}, {C.hour_window}, {C.hour_count}",
    C=RateLimitCounter,
)
_READ = Statement(
    "SELECT {C.minute_window}, {C.minute_count}, {C.hour_window}, {C.hour_count}"
    " FROM {C} WHERE {C.counter_key} = {p}",
    C=RateLimitCounter,
)
# rows untouched since before the previous hour hold no live count
_PURGE = Statement(
    "DELETE FROM {C} WHERE {C.counter_key} IN"
    " (SELECT {C.counter_key} FROM {C} WHERE {C.hour_window} < {p} LIMIT 1000)",
    C=RateLimitCounter,
)
# the counters' own SQLite file (``SqliteFileCounter``)
_CREATE_FILE_TABLE = Statement(
    "CREATE TABLE IF NOT EXISTS {C} ("
    " {C.counter_key} VARCHAR(255) NOT NULL PRIMARY KEY, {C.minute_window} BIGINT NOT NULL,"
    " {C.minute_count} INTEGER NOT NULL, {C.hour_window} BIGINT NOT NULL,"
    " {C.hour_count} INTEGER NOT NULL) WITHOUT ROWID",
    C=RateLimitCounter,
)


def _numbered(sql):
    """``%s`` placeholders as ``$1, $2, ...`` (PostgreSQL's PREPARE)."""
    parts = sql.split("%s")
    return parts[0] + "".join(f"${i}{part}" for i, part in enumerate(parts[1:], 1))


# PostgreSQL parses and plans a statement sent as text every time; the prepared one saves a
# quarter of the round trip. (A pooler that drops session state, like pgbouncer in transaction
# mode, loses it: then the process goes back to plain SQL.)
_PG_PREPARE = "PREPARE commerce_rl_acquire (text, bigint, bigint, integer, integer) AS " + (
    _numbered(_ACQUIRE.render("%s"))
)
_PG_EXECUTE = "EXECUTE commerce_rl_acquire (%s, %s, %s, %s, %s)"
_PG_UNDEFINED_PREPARED = "26000"  # invalid_sql_statement_name
_PG_DUPLICATE_PREPARED = "42P05"


def _pgcode(exc):
    return getattr(getattr(exc, "orig", None), "pgcode", None)  # peewee keeps the driver's error


class DatabaseCounter:
    """Counters in a ``rate_limit_counter`` table: one UPSERT per request.

    ``database`` is the app's (PostgreSQL: the table is UNLOGGED, counters are worth nothing
    after a crash, so the commit does not wait for a WAL flush), or the counters' own SQLite
    file (``SqliteFileCounter``).
    """

    def __init__(self, database=db):
        self.database = database
        self._next_purge = 0.0
        self._prepared = weakref.WeakSet()  # PostgreSQL connections holding _PG_PREPARE
        self._use_prepared = True

    def acquire(self, key: str, windows: Windows, amounts: Windows) -> Acquired:
        """Count one request in both windows if both have room.

        Returns ``(allowed, ((minute_window, count), (hour_window, count)))``: the counts
        after this request when allowed, else the current ones.
        """
        database = self.database
        param = database.param
        acquire = _ACQUIRE.render(param)
        minute, hour = windows
        params = (key, minute, hour, amounts[0], amounts[1])
        if param == "%s" and self._use_prepared:
            rows = self._execute_prepared(acquire, params)
        else:
            rows = database.execute_sql(acquire, params).fetchall()
        if rows:
            row = rows[0]
            if time.monotonic() >= self._next_purge:
                self._purge(hour)
            return True, ((row[0], row[1]), (row[2], row[3]))
        row = self.read(key)
        if row is None:  # deleted by a purge in between: nothing counted
            return False, ((minute, 0), (hour, 0))
        return False, (
            (row[0], row[1]) if row[0] >= minute else (minute, 0),
            (row[2], row[3]) if row[2] >= hour else (hour, 0),
        )

    def _execute_prepared(self, plain, params):
        connection = db.connection()
        try:
            if connection not in self._prepared:
                try:
                    db.execute_sql(_PG_PREPARE)
                except DatabaseError as exc:
                    if _pgcode(exc) != _PG_DUPLICATE_PREPARED:
                        raise
                self._prepared.add(connection)
            return db.execute_sql(_PG_EXECUTE, params).fetchall()
        except DatabaseError as exc:
            if _pgcode(exc) != _PG_UNDEFINED_PREPARED:
                raise
            log.info("prepared statements do not survive here; rate limits use plain SQL")
            self._use_prepared = False
            return db.execute_sql(plain, params).fetchall()

    def read(self, key: str) -> tuple[int, int, int, int] | None:
        """The caller's row ``(minute_window, minute_count, hour_window, hour_count)``."""
        rows = self.database.execute_sql(_READ.render(self.database.param), (key,)).fetchall()
        return rows[0] if rows else None

    def _purge(self, hour):
        self._next_purge = time.monotonic() + PURGE_INTERVAL_SECONDS
        self.database.execute_sql(_PURGE.render(self.database.param), (hour - 1,))


class SqliteFileCounter(DatabaseCounter):
    """Counters in a SQLite file of their own, shared by every process on the machine.

    Each thread keeps its own connection (peewee's). ``synchronous=OFF``: a counter lost to
    a power cut costs nothing, and a counter write then never waits for the disk.

    Writers take turns on an ``flock`` of ``<file>.lock`` (and a lock between the threads
    of one process) before they write. SQLite's own lock is not waited for but polled: a
    writer that finds it taken sleeps a millisecond or more, so two processes counting at
    once cost about 70 µs a request on average with a 1 ms p99 (measured); the kernel wakes
    an ``flock`` waiter as soon as the holder is done (27 µs on average, 0.1 ms p99).
    """

    def __init__(self, path):
        create_private_file(path)
        database = SqliteDatabase(
            path,
            pragmas={"journal_mode": "wal", "synchronous": "off", "busy_timeout": 15000},
            check_same_thread=False,
        )
        super().__init__(database)
        self.path = path
        self._turns = Turns(f"{path}.lock")
        database.execute_sql(_CREATE_FILE_TABLE.render(database.param))
        database.close()  # threads (and forked workers) open their own

    def acquire(self, key: str, windows: Windows, amounts: Windows) -> Acquired:
        with self._turns.turn():
            return super().acquire(key, windows, amounts)


_REDIS_ACQUIRE = """
local counts = {}
local allowed = 1
for i = 1, #KEYS do
    counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
    if counts[i] >= tonumber(ARGV[i]) then allowed = 0 end
end
if allowed == 1 then
    for i = 1, #KEYS do
        counts[i] = redis.call('INCR', KEYS[i])
        if counts[i] == 1 then redis.call('EXPIRE', KEYS[i], ARGV[#KEYS + i]) end
    end
end
return {allowed, counts[1], counts[2]}
"""


class RedisCounter:
    """Counters in Redis (``COMMERCE_REDIS_URL``): one Lua script call per request.

    The connection comes from the ``limits`` package's Redis storage, which understands
    ``redis://``, ``rediss://``, ``redis+unix://``, ``redis+sentinel://`` and
    ``redis+cluster://`` URLs. Keys are ``<prefix>:{<caller>}:<seconds>:<window>``; the
    braces keep a caller's keys in one cluster slot, as a multi-key script needs.
    """

    def __init__(self, url, prefix):
        from limits.storage import storage_from_string

        self.prefix = prefix
        self.storage = storage_from_string(
            url, key_prefix=prefix, socket_timeout=0.5, socket_connect_timeout=0.5
        )
        self.client = self.storage.get_connection()
        self._script = self.client.register_script(_REDIS_ACQUIRE)
        self._errors = self.storage.base_exceptions
        self._down_until = 0.0

    def keys(self, key: str, windows: Windows) -> list[str]:
        return [
            f"{self.prefix}:{{{key}}}:{seconds}:{window}"
            for seconds, window in zip(WINDOW_SECONDS, windows, strict=True)
        ]

    def acquire(self, key: str, windows: Windows, amounts: Windows) -> Acquired:
        if time.monotonic() < self._down_until:
            raise CounterUnavailable("redis marked down")
        # a key lives one window past its own, whatever clock the caller injected
        ttls = [seconds * 2 for seconds in WINDOW_SECONDS]
        try:
            allowed, minute, hour = self._script(
                keys=self.keys(key, windows), args=[*amounts, *ttls]
            )
        except self._errors as exc:
            self._down_until = time.monotonic() + REDIS_RETRY_SECONDS
            raise CounterUnavailable(str(exc)) from exc
        return allowed == 1, ((windows[0], int(minute)), (windows[1], int(hour)))


class RateLimiter:
    """Counts requests per caller; ``clock`` (Unix seconds) can be replaced by tests."""

    def __init__(self, counter, clock=time.time):
        self.counter = counter
        self.clock = clock

    def hit(self, auth: AuthContext) -> Decision | None:
        """Count one request of ``auth``'s caller; None when the counter is unreachable."""
        amounts = limits_for(auth)
        key = counter_key(auth)
        now = self.clock()
        windows = (int(now // WINDOW_SECONDS[0]), int(now // WINDOW_SECONDS[1]))
        try:
            for _ in range(3):
                allowed, state = self.counter.acquire(key, windows, amounts)
                # refused with no full window: a window rolled over in between; count again
                if allowed or any(c >= a for (_, c), a in zip(state, amounts, strict=True)):
                    break
        except CounterUnavailable as exc:
            log.warning("rate limit not counted (counter unavailable): %s", exc)
            return None
        return _decide(allowed, state, amounts, now)


def _decide(allowed, state, amounts, now):
    """Headers for the window closest to running out (on a tie, the later reset)."""
    best = None
    retry_at = None
    for (window, count), amount, seconds, name in zip(
        state, amounts, WINDOW_SECONDS, WINDOW_NAMES, strict=True
    ):
        reset = (window + 1) * seconds
        remaining = amount - count if count < amount else 0
        if best is None or (remaining, -reset) < (best[2], -best[3]):
            best = (name, amount, remaining, reset)
        if not allowed and count >= amount:
            retry_at = reset if retry_at is None else max(retry_at, reset)
    name, amount, remaining, reset = best
    retry_after = None
    if not allowed:
        retry_after = max(1, math.ceil((retry_at if retry_at is not None else now) - now))
    return Decision(allowed, amount, remaining, reset, name, retry_after)


def enforce_rate_limit() -> None:
    """Count the authenticated request; 429 ``RATE_LIMITED`` over either window."""
    limiter = current_app.extensions["commerce"].get("rate_limiter")
    if limiter is None:
        return
    decision = limiter.hit(g.auth)
    if decision is None:
        return
    g.rate_limit = decision
    if not decision.allowed:
        raise ApiError(
            "RATE_LIMITED",
            f"Rate limit exceeded: {decision.limit} requests per {decision.window}.",
            details={
                "limit": decision.limit,
                "window": decision.window,
                "retry_after": decision.retry_after,
            },
            headers={"Retry-After": str(decision.retry_after)},
        )


def add_rate_limit_headers(response: Response) -> Response:
    """``X-RateLimit-*`` on every response to a counted request, errors included."""
    decision = g.get("rate_limit")
    if decision is not None:
        headers = response.headers
        headers["X-RateLimit-Limit"] = str(decision.limit)
        headers["X-RateLimit-Remaining"] = str(decision.remaining)
        headers["X-RateLimit-Reset"] = str(decision.reset)
    return response


def init_app(app: Flask) -> None:
    """Build the app's limiter when ``RATE_LIMIT_ENABLED`` (the pipeline adds the headers)."""
    if not app.config.get("RATE_LIMIT_ENABLED"):
        return
    url = app.config.get("REDIS_URL")
    path = getattr(app.extensions["commerce"]["database"], "database", None)
    if url:
        counter = RedisCounter(url, app.config.get("RATE_LIMIT_KEY_PREFIX") or "commerce:rl")
    elif is_postgres(app.extensions["commerce"]["database"]) or path in (None, ":memory:"):
        counter = DatabaseCounter()
    else:
        counter = SlotFileCounter(f"{path}-ratelimit-slots", f"{path}-ratelimit", SqliteFileCounter)
    app.extensions["commerce"]["rate_limiter"] = RateLimiter(counter)
