"""The database layer: a proxy the app factory binds, engine pragmas, transactions."""

import json
import logging
import os
import sqlite3
import time
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlparse

import peewee
from playhouse.pool import PooledPostgresqlDatabase

from .errors import ApiError

# Models bind to the proxy; create_app() (or the CLI, or a worker) decides the engine.
db = peewee.DatabaseProxy()

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    # Several gunicorn processes and workers share one file: wait for the writer, don't fail.
    "busy_timeout": 15000,
    "foreign_keys": 1,
    "synchronous": "normal",
    "cache_size": -32000,
}

CENTS = Decimal("0.01")
# how often a thread's SQLite connection outside a transaction checks that its file is still
# the one at the database's path (every write transaction checks at its BEGIN)
FILE_CHECK_SECONDS = 1.0

log = logging.getLogger("commerce_api.db")


class BaseModel(peewee.Model):
    class Meta:
        database = db
        legacy_table_names = False


class MoneyField(peewee.DecimalField):
    """A decimal with two places, rounded half up; never a float in storage.

    PostgreSQL stores NUMERIC(14, 2). SQLite has no decimal type (a DECIMAL column has
    NUMERIC affinity and keeps 0.10 as the float 0.1), so there the column holds integer
    cents: exact, and it still sorts and compares as money.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_digits", 14)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("auto_round", True)
        kwargs.setdefault("rounding", ROUND_HALF_UP)
        super().__init__(*args, **kwargs)

    def db_value(self, value):
        value = super().db_value(value)  # a Decimal with two places (auto_round)
        if value is None or is_postgres():
            return value
        return int(value.scaleb(2))

    def python_value(self, value):
        if value is None:
            return None
        if isinstance(value, int) and not is_postgres():
            return Decimal(value).scaleb(-2)
        return super().python_value(value)


class JSONField(peewee.TextField):
    """JSON stored as text on every engine (portable, and we never query inside it)."""

    def db_value(self, value):
        if value is None:
            return None
        return json.dumps(value, separators=(",", ":"), default=str)

    def python_value(self, value):
        if value is None:
            return None
        return json.loads(value)


def is_postgres(database=None):
    database = database or db.obj
    return isinstance(database, peewee.PostgresqlDatabase)


def sqlite_path(url):
    """The file of a ``sqlite:///`` URL (":memory:" for none), or None for another engine."""
    parsed = urlparse(url)
    if parsed.scheme != "sqlite":
        return None
    path = unquote(parsed.path)
    # sqlite:///relative/file.db and sqlite:////absolute/file.db, as SQLAlchemy spells them
    path = path[1:] if path.startswith("/") else path
    return ":memory:" if path in ("", ":memory:") else path


def create_private_file(path: str) -> None:
    """Create ``path`` empty with mode 0600 unless it exists: a SQLite database holds the
    tenants' data (and its ``-wal`` and ``-shm`` take the file's mode), so it is never
    created readable by others, whatever the process umask (an empty file is an empty
    SQLite database)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return
    os.close(fd)


class _NotWrapped(Exception):
    """First base of an error peewee must pass on as it is: its exception wrapper renames
    an error after its first base when that is a DB-API name (``OperationalError``)."""


class DatabaseFileMissing(_NotWrapped, peewee.OperationalError):
    """The SQLite database file is not at its path (deleted, or moved away): it is not
    created again empty (``commerce-api init-db`` creates databases)."""


def file_identity(path: str) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of the file at ``path``, or None when there is none."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


class _IdentifiedConnection(sqlite3.Connection):
    """A SQLite connection that knows which file (``identity``) it opened."""

    identity: tuple[int, int] | None = None


class SqliteFileDatabase(peewee.SqliteDatabase):
    """A SQLite database in a file that follows the file at its path.

    A connection keeps the file it opened (its inode) whatever happens to the path: when
    the file is deleted, or replaced by another (a backup moved into place), a process
    would go on reading and writing a file nobody else sees, and lose it all when it
    closes. So each connection remembers the file's identity ``(st_dev, st_ino)`` when it
    was opened, and compares it with the path's: at every top-level ``BEGIN`` (nothing is
    written into a file that is gone), and at most every ``FILE_CHECK_SECONDS`` for
    statements outside a transaction (one ``stat``). A replaced file: this thread's
    connection is closed and the next statement opens the new file. A missing file: the
    connection is closed and ``DatabaseFileMissing`` is raised, and so on every statement
    until a file is back at the path; a connection is opened with ``mode=rw``, so SQLite
    never creates the file again, empty (``init-db`` does, through ``make_database``).
    Closing a connection to a file that was moved is safe: SQLite neither checkpoints nor
    deletes the ``-wal`` of a moved database on close (``databaseIsUnmoved``).
    """

    def _connect(self):
        path = self.database
        if path == ":memory:" or path.startswith("file:"):
            return super()._connect()
        uri = "file:" + quote(os.path.abspath(path)) + "?mode=rw"
        for _ in range(3):  # the file replaced while it was being opened: open it again
            before = file_identity(path)
            if before is None:
                raise DatabaseFileMissing(_missing_message(path))
            try:
                conn = sqlite3.connect(
                    uri,
                    uri=True,
                    timeout=self._timeout,
                    isolation_level=None,
                    factory=_IdentifiedConnection,
                    **self.connect_params,
                )
            except sqlite3.OperationalError:
                if file_identity(path) is None:  # deleted meanwhile
                    raise DatabaseFileMissing(_missing_message(path)) from None
                raise
            if file_identity(path) == before:
                break
            conn.close()
        else:
            raise DatabaseFileMissing(f"The database file {path} keeps being replaced.")
        conn.identity = before
        try:
            self._add_conn_hooks(conn)
        except Exception:
            conn.close()
            raise
        self._state.next_file_check = time.monotonic() + FILE_CHECK_SECONDS
        return conn

    def cursor(self, named_cursor=None):
        state = self._state
        if not state.closed and not state.transactions:
            now = time.monotonic()
            if now >= getattr(state, "next_file_check", 0.0):
                state.next_file_check = now + FILE_CHECK_SECONDS
                self.check_file()
        return super().cursor(named_cursor)

    def begin(self, lock_type=None):
        # a transaction starts (peewee calls this at depth 0, before it is pushed)
        if not self._state.closed:
            self.check_file()
        return super().begin(lock_type)

    def file_changed(self) -> str | None:
        """None while this thread's connection (if any) has the file at the path; else
        ``"missing"`` or ``"replaced"``."""
        conn = self._state.conn
        identity = getattr(conn, "identity", None)
        if conn is None or identity is None:
            return None
        current = file_identity(self.database)
        if current == identity:
            return None
        return "missing" if current is None else "replaced"

    def check_file(self) -> None:
        """Outside a transaction: close this thread's connection when its file is no longer
        at the path; raise ``DatabaseFileMissing`` when no file is."""
        change = self.file_changed()
        if change is None:
            return
        log.error(
            "the database file %s was %s since this connection opened it: %s",
            self.database,
            "deleted or moved away" if change == "missing" else "replaced",
            "refusing every statement until it is back"
            if change == "missing"
            else "opening the new file",
        )
        self.close()
        if change == "missing":
            raise DatabaseFileMissing(_missing_message(self.database))


def _missing_message(path):
    return (
        f"The database file {path} is missing (deleted or moved away); it is not created "
        "again empty: put the database back (or create one with commerce-api init-db)."
    )


def make_database(url):
    """Build (not connect) a peewee Database for a ``sqlite:///`` or ``postgresql://`` URL."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        path = sqlite_path(url)
        if path != ":memory:":
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            create_private_file(path)
        database = SqliteFileDatabase(path, pragmas=SQLITE_PRAGMAS, check_same_thread=False)
        # SQLite's LOWER() folds ASCII only; search folds every letter, as PostgreSQL does
        database.register_function(_unicode_lower, "unicode_lower", 1, deterministic=True)
        return database
    if parsed.scheme in ("postgres", "postgresql"):
        options = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        max_connections = int(options.pop("pool_size", 20))
        return PooledPostgresqlDatabase(
            unquote(parsed.path.lstrip("/")) or "postgres",
            user=unquote(parsed.username) if parsed.username else None,
            password=unquote(parsed.password) if parsed.password else None,
            host=parsed.hostname or None,
            port=parsed.port or None,
            max_connections=max_connections,
            stale_timeout=300,
            timeout=30,
            **options,
        )
    raise ValueError(f"unsupported database URL scheme: {parsed.scheme!r}")


def sqlite_file(database):
    """The file of a SQLite peewee Database, or None (PostgreSQL, in memory, a URI)."""
    path = None if is_postgres(database) else getattr(database, "database", None)
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return path


def init_database(url):
    """Bind the proxy to the database named by ``url`` and return it."""
    database = make_database(url)
    db.initialize(database)
    return database


def write_transaction():
    """A transaction that takes the write lock at once.

    On SQLite, ``BEGIN IMMEDIATE`` avoids the deadlock of two readers upgrading to
    writers (which SQLite answers with "database is locked" without waiting). On
    PostgreSQL it is an ordinary transaction; callers lock rows with ``FOR UPDATE``.
    Nested calls become savepoints.
    """
    if db.transaction_depth() == 0 and not is_postgres():
        return db.atomic("IMMEDIATE")
    return db.atomic()


def for_update(query):
    """Add ``FOR UPDATE`` on PostgreSQL (SQLite's immediate transaction already serializes)."""
    return query.for_update() if is_postgres() else query


def first_or_error(
    query: peewee.SelectQuery, code: str, details: dict[str, Any], lock: bool = False
) -> Any:
    """The first row of ``query`` (``for_update`` when ``lock``), or ``ApiError(code,
    details=details)`` when there is none: a tenant's resource by its id."""
    row = (for_update(query) if lock else query).first()
    if row is None:
        raise ApiError(code, details=details)
    return row


def quantize_money(value):
    return Decimal(value).quantize(CENTS, rounding=ROUND_HALF_UP)


def row_getter(row):
    """``get(name)`` on a row given as a dict (``.dicts()`` queries) or as a model."""
    return row.get if isinstance(row, dict) else row.__data__.get


def json_default(value):
    """``json.dumps(default=...)`` for the service's values: Decimal (money, emitted as a
    number with its two places) and tuples and sets (as lists)."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _unicode_lower(value):
    return value.lower() if isinstance(value, str) else value


def contains_text(column, term):
    """Case-insensitive substring match, the same on SQLite and PostgreSQL."""
    escaped = term.lower().replace("!", "!!").replace("%", "!%").replace("_", "!_")
    lower = peewee.fn.LOWER if is_postgres() else peewee.fn.unicode_lower
    return peewee.NodeList(
        (lower(column), peewee.SQL("LIKE"), f"%{escaped}%", peewee.SQL("ESCAPE '!'"))
    )
