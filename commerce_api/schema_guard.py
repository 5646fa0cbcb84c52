"""The CLI never creates an empty database by accident.

Before a command other than ``init-db``, ``demo`` and ``serve`` builds the app (which would
create the SQLite file, its folder and the rate-limit files), the database named by
``COMMERCE_DATABASE_URL`` is looked at without creating anything: a missing file, or one
without the schema, is reported in one line naming the resolved path.
"""

import os
import sqlite3
from urllib.parse import quote, urlparse

from .cli_output import stop
from .db import make_database, sqlite_path
from .migrations import TABLE


def describe(url):
    """The database in words an operator can act on: a SQLite file's absolute path, or
    PostgreSQL's host, port and database (never the password)."""
    path = sqlite_path(url)
    if path is not None:
        return path if path == ":memory:" else os.path.abspath(path)
    parsed = urlparse(url)
    host = parsed.hostname or "localhost"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{host}{port}/{parsed.path.lstrip('/')}"


def missing_schema(url):
    """None when the database has the schema, else why not (one line)."""
    path = sqlite_path(url)
    if path == ":memory:":
        return "an in-memory database has no schema"
    if path is not None:
        if not os.path.isfile(path):
            return "no such file"
        try:
            # read-only: opening it must not create or change anything
            # percent-encoded: a ``?``, ``%`` or ``#`` in the path is part of the name
            conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True)
            try:
                found = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
                ).fetchone()
            finally:
                conn.close()
        except sqlite3.DatabaseError as error:
            return f"not a readable SQLite database ({error})"
        return None if found else "the file has no schema"
    database = make_database(url)
    try:
        database.connect()
        found = database.table_exists(TABLE)
    except Exception as error:  # unreachable, refused, unknown database, no such role
        return f"cannot connect ({str(error).strip().splitlines()[0]})"
    finally:
        if not database.is_closed():
            database.close()
        close_all = getattr(database, "close_all", None)
        if close_all is not None:
            close_all()
    return None if found else "the database has no schema"


def require_schema(url):
    """Exit 2, creating nothing, when the database at ``url`` has no schema."""
    reason = missing_schema(url)
    if reason is not None:
        stop(
            f"no Commerce API database at {describe(url)} ({reason}); set"
            " COMMERCE_DATABASE_URL, or create it with `commerce-api init-db`"
        )
