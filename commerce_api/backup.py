"""``commerce-api backup`` and ``restore``: a SQLite database copied while the service runs.

The backup uses SQLite's online backup API in one step: it reads one consistent snapshot
(a WAL read transaction, so writers go on meanwhile) and writes it to a new file, which
replaces FILE only when complete. PostgreSQL has ``pg_dump`` for this.

The backup never writes over a database: ``--to`` is compared with the database as files
(``samefile``, ``realpath``: another spelling, a symlinked folder, a hard link), its
``-wal``/``-shm`` included, and an existing file that is a database in use (WAL mode, or a
``-wal``/``-shm`` beside it) is refused. Stored secrets are encrypted with
``COMMERCE_SECRET_KEY`` or the ``secret.key`` beside the database, which the copy does not
hold: the command says so.

A restore must not pull the file from under a running process. In WAL mode every open
connection holds a shared lock on the "DMS" byte of the ``-shm`` file (SQLite's WAL-index
format, https://sqlite.org/walformat.html); ``restore`` takes that byte exclusively, which
succeeds only when no process has the database open, and holds it while it swaps the file,
so nothing can open the database half-restored.
"""

import contextlib
import fcntl
import os
import sqlite3
import tempfile
from urllib.parse import quote

import click

from .cli_output import fail, print_result
from .config import load_config
from .db import sqlite_path
from .migrations import TABLE
from .schema_guard import describe, require_schema

SHM_DMS_OFFSET = 128  # WALINDEX_LOCK_OFFSET (120) + 8: the dead-man-switch lock byte
DATABASE_SUFFIXES = ("", "-wal", "-shm", "-journal")  # a SQLite database's files
WAL_HEADER_OFFSET = 18  # bytes 18 and 19 of the header: 2 in WAL mode, 1 in rollback mode


def read_only_uri(path: str) -> str:
    """A ``file:`` URI opening ``path`` read-only; the path is percent-encoded, so that a
    ``?``, ``%`` or ``#`` in it is part of the name, not of the URI."""
    return f"file:{quote(os.path.abspath(path))}?mode=ro"


def _same_file(a, b):
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def _in_use(path):
    """Whether the existing file ``path`` is a database in use: in WAL mode, or with a
    ``-wal`` or ``-shm`` beside it (a backup is written in rollback mode, without them)."""
    if any(os.path.exists(path + suffix) for suffix in ("-wal", "-shm")):
        return True
    try:
        with open(path, "rb") as handle:
            header = handle.read(WAL_HEADER_OFFSET + 2)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\0") and header[WAL_HEADER_OFFSET:] == b"\2\2"


def check_backup_target(target: str, source: str) -> None:
    """Refuse a ``--to`` that is the database (or one of its files) however it is spelled,
    or an existing database in use."""
    for suffix in DATABASE_SUFFIXES:
        if _same_file(target, source + suffix):
            fail(f"--to names the database itself ({source}{suffix}): choose another file")
    if os.path.exists(target) and _in_use(target):
        fail(
            f"{target} is a database in use (WAL mode or a -wal/-shm beside it): a backup"
            " never writes over a database; choose a new file or an earlier backup"
        )


def secret_key_note(source: str, setting: str | None) -> dict[str, str | None]:
    """What a restore of the backup needs besides it to read the stored secrets."""
    if setting:
        return {
            "file": None,
            "note": "stored secrets are encrypted with COMMERCE_SECRET_KEY: a restore needs"
            " the same setting to read them",
        }
    path = os.path.join(os.path.dirname(source), "secret.key")
    return {
        "file": path,
        "note": f"stored secrets are encrypted with {path}, which the backup does not hold:"
        " keep a copy of it with the backup (a restore without it cannot read them)",
    }


def _sqlite_file(url):
    path = sqlite_path(url)
    if path is None:
        fail(
            f"{describe(url)} is a PostgreSQL database: back it up with pg_dump and restore"
            " it with pg_restore (or psql), as for any PostgreSQL database"
        )
    if path == ":memory:":
        fail("an in-memory database cannot be backed up or restored")
    return os.path.abspath(path)


def _check(path):
    """``(integrity_check result, has schema)`` of a SQLite file, opened read-only."""
    conn = sqlite3.connect(read_only_uri(path), uri=True)
    try:
        result = conn.execute("PRAGMA integrity_check").fetchone()[0]
        schema = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
        ).fetchone()
    finally:
        conn.close()
    return result, schema is not None


@contextlib.contextmanager
def _copy_beside(source, target, journal_mode):
    """Copy ``source`` (one snapshot) to a temporary file in ``target``'s folder; yields
    its path for the caller to move into place, and removes it if that does not happen."""
    folder = os.path.dirname(target) or "."
    os.makedirs(folder, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=".copy-", suffix=".db", dir=folder)
    os.close(fd)
    try:
        src = sqlite3.connect(read_only_uri(source), uri=True)
        dst = sqlite3.connect(partial)
        try:
            src.execute("PRAGMA busy_timeout = 15000")
            src.backup(dst)  # pages=-1: one step, one snapshot; writers go on under WAL
            dst.execute(f"PRAGMA journal_mode = {journal_mode}")
        finally:
            dst.close()
            src.close()
        yield partial
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def backup_sqlite(source, target):
    """Copy ``source`` to ``target`` as one self-contained file (no ``-wal`` beside it)."""
    with _copy_beside(source, target, "DELETE") as partial:
        os.replace(partial, target)
    return os.path.getsize(target)


@contextlib.contextmanager
def sole_access(path):
    """Hold the database's DMS lock byte; fail when any process has it open."""
    shm = path + "-shm"
    if not os.path.exists(shm):
        yield  # never opened in WAL mode since its last clean close: nobody holds it
        return
    fd = os.open(shm, os.O_RDWR)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, SHM_DMS_OFFSET)
        except OSError:
            fail(
                f"{path} is open in a running process (the API or a worker): stop every"
                " process that uses it, then restore"
            )
        yield
    finally:
        os.close(fd)  # releases the lock


def restore_sqlite(backup, target):
    """Replace ``target`` with a copy of ``backup``; nobody may have ``target`` open."""
    with _copy_beside(backup, target, "WAL") as partial, sole_access(target):
        for leftover in (target + "-wal", target + "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)  # the old database's log: not the restored one's
        os.replace(partial, target)
    return os.path.getsize(target)


def register(cli):
    @cli.command("backup", with_appcontext=False)  # never opens the database for writing
    @click.option("--to", "target", required=True, type=click.Path(dir_okay=False))
    @click.option("--json", "as_json", is_flag=True)
    def backup_command(target, as_json):
        """Copy the SQLite database to FILE while the service runs (PostgreSQL: pg_dump)."""
        config = load_config()
        url = config["DATABASE_URL"]
        source = _sqlite_file(url)
        require_schema(url)
        target = os.path.abspath(target)
        check_backup_target(target, source)
        size = backup_sqlite(source, target)
        secret_key = secret_key_note(source, config.get("SECRET_KEY"))
        payload = {"source": source, "backup": target, "bytes": size, "secret_key": secret_key}
        text = f"backed up {source} to {target} ({size} bytes)\nnote: {secret_key['note']}"
        print_result(payload, as_json, text)

    @cli.command("restore", with_appcontext=False)
    @click.option("--from", "backup", required=True, type=click.Path(exists=True, dir_okay=False))
    @click.option("--json", "as_json", is_flag=True)
    def restore_command(backup, as_json):
        """Replace the SQLite database with a backup (every process using it stopped)."""
        target = _sqlite_file(load_config()["DATABASE_URL"])
        backup = os.path.abspath(backup)
        if any(_same_file(backup, target + suffix) for suffix in DATABASE_SUFFIXES):
            fail("--from names the database itself")
        try:
            result, has_schema = _check(backup)
        except sqlite3.DatabaseError as error:
            fail(f"{backup} is not a SQLite database ({error})")
        if result != "ok" or not has_schema:
            reason = "has no schema" if result == "ok" else f"fails integrity_check: {result}"
            fail(f"{backup} {reason}; nothing was restored")
        size = restore_sqlite(backup, target)
        payload = {"database": target, "restored_from": backup, "bytes": size}
        text = (
            f"restored {target} from {backup} ({size} bytes); run `commerce-api init-db`"
            " if the backup comes from an older version"
        )
        print_result(payload, as_json, text)
