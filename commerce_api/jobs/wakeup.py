"""How the worker's main loop sleeps, and learns that new work may have arrived.

PostgreSQL: LISTEN on the queue's channel (dispatch NOTIFYs it at commit). SQLite: a change
of ``PRAGMA data_version`` (a commit by any connection) followed by a read-only probe.
Either way a self-pipe lets the worker's own threads cut a sleep short.
"""

import contextlib
import logging
import os
import select
import threading
import time
from collections.abc import Callable

from ..db import db, is_postgres
from .store import NOTIFY_CHANNEL

log = logging.getLogger("commerce_api.jobs")

SQLITE_PROBE_SECONDS = 0.01  # how often an idle SQLite worker checks data_version
RELISTEN_SECONDS = 5.0  # a lost LISTEN connection is opened again this often (meanwhile: poll)


class WakeUp:
    def __init__(self, worker_id: str, poll_interval: float) -> None:
        self.worker_id = worker_id
        self.poll_interval = poll_interval
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._listen = None
        self._listening = False  # LISTEN was wanted (PostgreSQL): a lost one is reopened
        self._relisten_at = 0.0
        self._notified = False
        self._data_version = None

    def wake(self) -> None:
        """Cut the main loop's current sleep short."""
        try:
            os.write(self._write, b"x")
        except OSError:
            pass

    def _drain(self):
        try:
            while os.read(self._read, 512):
                pass
        except OSError:
            pass

    def wait(self, timeout: float) -> None:
        """Sleep up to ``timeout`` or until woken."""
        try:
            select.select([self._read], [], [], timeout)
        except (OSError, ValueError):
            time.sleep(timeout)
        self._drain()

    def wait_for_work(
        self,
        timeout: float,
        stopping: threading.Event,
        any_idle: Callable[[], bool],
        probe: Callable[[], object],
    ) -> bool:
        """Sleep up to ``timeout``; True when new work may have arrived meanwhile.

        ``stopping`` is the worker's stop event, ``any_idle()`` whether a runner could take
        work, ``probe()`` whether jobs are due (the read-only check after a commit).
        """
        if stopping.is_set():
            return False
        if self._listen is not None:
            try:
                readable, _, _ = select.select([self._read, self._listen], [], [], timeout)
            except (OSError, ValueError):
                readable = []
                time.sleep(timeout)
            self._drain()
            if self._listen in readable:
                self._poll_listener()
            notified, self._notified = self._notified, False
            return notified
        if is_postgres():  # no LISTEN connection: the poll interval decides
            if self._listening and time.monotonic() >= self._relisten_at:
                self._relisten_at = time.monotonic() + RELISTEN_SECONDS
                self.open_listener()  # (the database failed over, or restarted)
                return self._listen is not None  # what was NOTIFYed meanwhile is lost
            self.wait(timeout)
            return False
        # SQLite: watch data_version (a pragma, microseconds) until something commits
        deadline = time.monotonic() + timeout
        while not stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            readable, _, _ = select.select(
                [self._read], [], [], min(SQLITE_PROBE_SECONDS, remaining)
            )
            if readable:
                self._drain()
                return False
            if any_idle() and self._data_changed():
                return bool(probe())
        return False

    def _data_changed(self):
        try:
            version = db.execute_sql("PRAGMA data_version").fetchone()[0]
        except Exception:
            return True
        changed = self._data_version is not None and version != self._data_version
        self._data_version = version
        return changed

    def _poll_listener(self):
        try:
            self._listen.poll()
        except Exception:
            log.exception("worker %s: LISTEN connection failed; polling", self.worker_id)
            with contextlib.suppress(Exception):
                self._listen.close()
            self._listen = None
            self._relisten_at = time.monotonic() + RELISTEN_SECONDS
            self._notified = True
            return
        if self._listen.notifies:
            self._listen.notifies.clear()
            self._notified = True

    def open_listener(self) -> None:
        """PostgreSQL: LISTEN on a connection of its own (else poll)."""
        if not is_postgres():
            return
        self._listening = True
        import psycopg2  # the optional PostgreSQL driver (the "postgres" extra)

        try:
            params = dict(db.obj.connect_params)
            params.setdefault("connect_timeout", 5)
            connection = psycopg2.connect(dbname=db.obj.database, **params)
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(f"LISTEN {NOTIFY_CHANNEL}")
            self._listen = connection
        except Exception:
            log.exception(
                "worker %s: LISTEN failed; polling every %ss", self.worker_id, self.poll_interval
            )
            self._listen = None

    def close(self) -> None:
        if self._listen is not None:
            try:
                self._listen.close()
            except Exception:
                pass
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
