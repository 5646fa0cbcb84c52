"""What a database error means for the caller: lock contention, an outage, or a bug.

The web layer answers the first two with 503 ``SERVICE_UNAVAILABLE`` and ``Retry-After``
(the request changed nothing and may be retried); anything else stays a 500. A message
is never searched for a word ("locked" is also inside "blocked"): SQLite's lock errors are
matched whole, PostgreSQL's by SQLSTATE.
"""

import logging

import peewee
from playhouse.pool import MaxConnectionsExceeded

from .db import DatabaseFileMissing, db, is_postgres

log = logging.getLogger(__name__)

BUSY = "busy"
UNAVAILABLE = "unavailable"

# sqlite3 says exactly these when another connection holds the lock past busy_timeout
_SQLITE_BUSY = ("database is locked", "database table is locked", "database schema is locked")
# lock_not_available (lock_timeout, NOWAIT), deadlock_detected, serialization_failure
_PG_BUSY = frozenset(("55P03", "40P01", "40001"))
# admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
_PG_UNAVAILABLE = frozenset(("57P01", "57P02", "57P03", "53300"))


def _driver_error(error):
    """The DB-API exception peewee wrapped (as the first argument; the pool's connect is
    wrapped twice), or None."""
    for _ in range(4):
        if not isinstance(error, peewee.PeeweeException):
            return error
        inner = error.args[0] if error.args else None
        error = inner if isinstance(inner, Exception) else error.__context__
    return None


def classify(error):
    """``BUSY``, ``UNAVAILABLE`` or None (not a failure the caller can wait out)."""
    if isinstance(error, MaxConnectionsExceeded):
        return UNAVAILABLE  # every pooled connection stayed busy for the pool's time-out
    if isinstance(error, DatabaseFileMissing):
        return UNAVAILABLE  # the SQLite file is not at its path until it is put back
    if not isinstance(error, peewee.OperationalError | peewee.InterfaceError):
        return None
    driver = _driver_error(error)
    pgcode = getattr(driver, "pgcode", None)
    if pgcode is not None:
        if pgcode in _PG_BUSY:
            return BUSY
        if pgcode.startswith("08") or pgcode in _PG_UNAVAILABLE:
            return UNAVAILABLE
        return None
    message = str(driver or error).strip().lower()
    if message.startswith(_SQLITE_BUSY):
        return BUSY
    if _is_psycopg(driver):
        # no SQLSTATE: the driver lost the server (refused, reset, closed, shut down)
        return UNAVAILABLE
    return None


def _is_psycopg(driver):
    return driver is not None and type(driver).__module__.split(".")[0].startswith("psycopg")


def discard_connections():
    """After an outage: drop this thread's connection and the pool's idle ones, so that
    the next request connects afresh instead of finding a dead connection."""
    if not is_postgres():
        return
    database = db.obj
    try:
        if not database.is_closed():
            database.manual_close()
        database.close_idle()
    except Exception:  # closing a dead connection may fail too; it is gone either way
        log.debug("discarding database connections failed", exc_info=True)
