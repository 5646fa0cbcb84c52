"""Writers that take turns on an ``flock(2)``, across the threads and processes of a host.

SQLite lets one connection write at a time, and one that finds the lock taken sleeps in
SQLite's busy handler: 1 ms, then 2, 5, 10... even when the lock frees after 50 us. Writers
that queue on a lock of their own instead are woken the moment it is released: a thread
lock inside the process, and an ``flock`` on a file beside the database between processes.
"""

import fcntl
import os
import threading
from contextlib import contextmanager


class Turns:
    """``with turns.turn():`` one holder at a time among every ``Turns`` of ``path``.

    The file is opened per process, on first use after a fork (an inherited descriptor
    would share its lock with the parent). ``path`` None: only the thread lock (an
    in-memory database has one process).
    """

    def __init__(self, path):
        self.path = path
        self._state = None  # (pid, thread lock, file descriptor or None)
        self._opening = threading.Lock()

    def _current(self):
        state = self._state
        if state is None or state[0] != os.getpid():
            with self._opening:
                state = self._state
                if state is None or state[0] != os.getpid():
                    fd = None
                    if self.path:
                        try:
                            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                        except OSError:
                            fd = None
                    state = self._state = (os.getpid(), threading.Lock(), fd)
        return state

    @contextmanager
    def turn(self):
        _pid, thread_lock, fd = self._current()
        with thread_lock:
            if fd is None:
                yield
                return
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
