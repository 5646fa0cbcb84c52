"""SQLite's WAL checkpoints, moved off the commits that hold the job writers' lock.

SQLite checkpoints from inside the commit that takes the WAL past ``wal_autocheckpoint``
frames (1,000 pages): that commit copies the WAL's pages into the database file and syncs
both files (two ``fdatasync``) before it returns, and its caller, a dispatch or a worker's
claim, still holds the job writers' lock (``filelock.Turns``), so every other dispatch and
claim waits for it. Under a burst that was one checkpoint every ~40 ms.

A ``Checkpointer`` thread (the job worker runs one; any long-lived process may) reads the
WAL-index header (the ``-shm`` file, with ``pread``, no lock) every 10 ms and, once
``frames`` frames wait to be copied, runs ``PRAGMA wal_checkpoint(PASSIVE)`` on a connection
of its own. A passive checkpoint never blocks a writer and never waits for one: it copies
what no reader still needs and returns. Commits keep SQLite's own checkpoint as the
backstop (the default 1,000 frames, unchanged), which now finds almost everything copied:
it copies the few frames written meanwhile, and it is what lets the next writer restart
the WAL from its start, so the file stays a few megabytes under any load.

The header's layout is part of SQLite's file format (https://sqlite.org/walformat.html):
``mxFrame`` (the last valid frame) at byte 16 and ``nBackfill`` (frames already copied)
at byte 96, native byte order. A torn read only makes one check early or late.

The ``-shm`` descriptor is opened once per process and never closed: POSIX drops every
``fcntl`` lock a process holds on a file when it closes *any* descriptor of that file, so
closing it would silently drop SQLite's own shared lock on the WAL-index of every other
connection in the process. The next process to open the database would then find itself
alone, re-initialize (truncate) the ``-shm`` file, and every process still mapping it
would die of SIGBUS on its next read (seen in the suite after an in-process worker stopped).
"""

import logging
import os
import sqlite3
import struct
import threading

from .db import sqlite_file

log = logging.getLogger("commerce_api.checkpoint")

POLL_SECONDS = 0.01
_HEADER = struct.Struct("=I")
_MX_FRAME, _BACKFILLED = 16, 96
_shm_fds = {}  # path -> descriptor of its -shm file, kept for the life of the process
_shm_lock = threading.Lock()


def shm_descriptor(path):
    """A read-only descriptor of ``path``'s ``-shm`` file, opened once per process; never
    close it (see the module's docstring)."""
    with _shm_lock:
        fd = _shm_fds.get(path)
        if fd is None:
            fd = _shm_fds[path] = os.open(path + "-shm", os.O_RDONLY | os.O_CLOEXEC)
        return fd


def start(database, frames):
    """A started Checkpointer for ``database`` (a peewee Database), or None when it is not
    a SQLite file (PostgreSQL, in memory) or ``frames`` is 0."""
    path = sqlite_file(database)
    if not path or frames <= 0:
        return None
    return Checkpointer(path, frames).start()


def stop(checkpointer):
    """Stop what ``start()`` returned (None: nothing)."""
    if checkpointer is not None:
        checkpointer.stop()


def waiting_frames(fd):
    """Frames in the WAL not yet copied into the database, from the ``-shm`` header (0 when
    the file is too short: no WAL-index yet)."""
    header = os.pread(fd, _BACKFILLED + 4, 0)
    if len(header) < _BACKFILLED + 4:
        return 0
    last = _HEADER.unpack_from(header, _MX_FRAME)[0]
    copied = _HEADER.unpack_from(header, _BACKFILLED)[0]
    return max(0, last - copied)


class Checkpointer:
    """A daemon thread that checkpoints ``path`` (a SQLite file in WAL mode) passively
    whenever ``frames`` or more frames wait. ``start()`` / ``stop()``."""

    def __init__(self, path, frames):
        self.path = path
        self.frames = int(frames)
        self.checkpoints = 0  # passive checkpoints run (tests, logs)
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        if self.frames <= 0 or self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._main, name="sqlite-checkpoint", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout=5.0):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _main(self):
        connection = None
        try:
            # the connection opens the WAL-index first, and while it is open no other
            # connection re-initializes (truncates) the -shm file under the reads below
            connection = sqlite3.connect(self.path, isolation_level=None, timeout=0)
            if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                return
            connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            fd = shm_descriptor(self.path)
            while not self._stop.wait(POLL_SECONDS):
                if waiting_frames(fd) < self.frames:
                    continue
                try:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                except sqlite3.OperationalError:
                    pass  # another process's checkpoint is running: it does the work
        except Exception:
            log.exception("checkpoints of %s: the thread stopped; commits checkpoint", self.path)
        finally:
            if connection is not None:
                connection.close()
