"""Long-running loops that survive a lost database, and what they report about themselves.

A worker's loops (its main loop, the runners, the heartbeat, the background loops) hold a
database connection across many passes. When the database restarts or fails over, that
connection is dead for good: every later use answers "connection already closed". So a
failed pass drops this thread's connection (the next statement connects afresh, and the
pool checks an idle connection before handing it out), waits with a growing, capped
backoff and goes on; a loop never gives up.

Each loop records its last successful pass here (``passed``); the heartbeat writes them
with the worker's row (``worker_process.loops``), and readiness and ``/metrics`` report a
loop whose last pass is older than ``WORKER_STALL_SECONDS``.
"""

import logging
import random
import threading
import time

import peewee

from . import db_errors
from .db import db, is_postgres
from .timeutil import now_ms

log = logging.getLogger("commerce_api.loops")

BACKOFF_FIRST_SECONDS = 0.2
BACKOFF_MAX_SECONDS = 5.0  # a loop tries again at least this often while the database is down

_lock = threading.Lock()
_passes: dict[str, int] = {}  # loop name -> epoch ms of its last successful pass
_failing: dict[str, int] = {}  # loop name -> epoch ms of the first failure of its current run


def passed(name: str) -> None:
    """Loop ``name`` finished a pass that reached the database (or needed none)."""
    now = now_ms()
    with _lock:
        _passes[name] = now
        _failing.pop(name, None)


def failed(name: str) -> None:
    """Loop ``name`` failed a pass (its last successful pass stays as it was)."""
    now = now_ms()
    with _lock:
        _failing.setdefault(name, now)
        _passes.setdefault(name, 0)


def snapshot() -> dict[str, int]:
    """``{loop name: epoch ms of its last successful pass (0: none yet)}``."""
    with _lock:
        return dict(_passes)


def forget(*names: str) -> None:
    """A loop stopped (or a worker starts afresh): no longer reported."""
    with _lock:
        for name in names or list(_passes):
            _passes.pop(name, None)
            _failing.pop(name, None)


def stalled(loops: dict[str, int], now: int, stall_ms: int) -> dict[str, float]:
    """``{loop: seconds since its last pass}`` of the loops in ``loops`` (as ``snapshot``
    gives them) whose last pass is more than ``stall_ms`` old."""
    return {
        name: round(max(0, now - last) / 1000, 1)
        for name, last in sorted(loops.items())
        if now - last > stall_ms
    }


def drop_connection(error: BaseException | None = None) -> None:
    """After a failed pass: drop this thread's connection when it may be broken.

    PostgreSQL: any database error may have left the connection dead (terminated,
    failed over, reset); it is closed and removed from the pool, with the pool's idle
    connections. SQLite: lock contention (busy) keeps the connection; any other database
    error closes it, so the file is opened again (it may have been replaced).
    """
    if (
        error is not None
        and not isinstance(error, peewee.PeeweeException)
        and not _is_driver_error(error)
    ):
        return  # a bug in the pass, not the connection
    if is_postgres():
        _forget_connection()
        if error is None or db_errors.classify(error) == db_errors.UNAVAILABLE:
            try:
                db.obj.close_idle()  # as dead, after an outage (the pool checks them too)
            except Exception:
                log.debug("closing idle connections failed", exc_info=True)
        return
    if error is not None and db_errors.classify(error) == db_errors.BUSY:
        return
    _forget_connection()


def _is_driver_error(error):
    return type(error).__module__.split(".")[0] in ("sqlite3", "psycopg2", "psycopg")


def _forget_connection():
    """Close this thread's connection and never hand it out again: a transaction peewee
    still thinks open on it is dropped first (a dead connection has nothing to roll back),
    then the pool closes it instead of keeping it. The next statement connects afresh."""
    database = db.obj
    if database is None or database.is_closed():
        return
    try:
        while database.in_transaction():
            database.pop_transaction()
        if hasattr(database, "manual_close"):
            database.manual_close()  # the pool's own: closed, its slot freed
        else:
            database.close()
    except Exception:
        log.warning("closing a broken connection failed; forgetting it", exc_info=True)
        # peewee's own reset of this thread's state (the pool's dispose() would forget
        # every thread's connections)
        peewee.Database.dispose(database)


class Backoff:
    """Delays between failed passes: doubling from ``first`` up to ``cap``, with jitter."""

    def __init__(self, first: float = BACKOFF_FIRST_SECONDS, cap: float = BACKOFF_MAX_SECONDS):
        self.first = first
        self.cap = cap
        self.failures = 0

    def next_delay(self) -> float:
        self.failures += 1
        delay = min(self.cap, self.first * 2 ** (self.failures - 1))
        return delay * random.uniform(0.75, 1.0)

    def reset(self) -> None:
        self.failures = 0


def after_failure(
    name: str,
    backoff: Backoff,
    error: BaseException | None,
    stop: threading.Event | None = None,
) -> None:
    """A pass of loop ``name`` failed (the caller logged it): record it, drop a broken
    connection, and wait out the backoff (cut short by ``stop``)."""
    failed(name)
    drop_connection(error)
    delay = backoff.next_delay()
    if stop is not None:
        stop.wait(delay)
    else:
        time.sleep(delay)
