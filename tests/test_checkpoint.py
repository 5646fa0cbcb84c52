"""WAL checkpoints from a thread (commerce_api/checkpoint.py), not from the commits that
hold the job writers' lock."""

import os
import sqlite3
import time

import peewee
import pytest

from commerce_api import checkpoint
from tests.support.waiting import wait_for

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


def _writer(path):
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=wal")
    connection.execute("PRAGMA wal_autocheckpoint=0")  # nobody checkpoints but the test
    connection.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)")
    return connection


def _write(connection, commits):
    for n in range(commits):
        connection.execute("INSERT INTO t (v) VALUES (?)", ("x" * 200 + str(n),))


def test_waiting_frames_reads_the_wal_index_header(tmp_path):
    path = str(tmp_path / "w.db")
    connection = _writer(path)
    _write(connection, 50)
    fd = os.open(path + "-shm", os.O_RDONLY)
    try:
        waiting = checkpoint.waiting_frames(fd)
        busy, frames, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and copied == frames
        assert waiting == frames >= 50  # one frame per commit at least, none copied before
        assert checkpoint.waiting_frames(fd) == 0
        _write(connection, 3)
        assert checkpoint.waiting_frames(fd) >= 3
    finally:
        os.close(fd)
        connection.close()


def test_a_short_shm_file_means_nothing_waits(tmp_path):
    path = tmp_path / "empty-shm"
    path.write_bytes(b"\0" * 10)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert checkpoint.waiting_frames(fd) == 0
    finally:
        os.close(fd)


def test_the_thread_copies_the_wal_once_enough_frames_wait(tmp_path):
    path = str(tmp_path / "c.db")
    connection = _writer(path)
    checkpointer = checkpoint.Checkpointer(path, frames=40).start()
    fd = os.open(path + "-shm", os.O_RDONLY)
    try:
        _write(connection, 20)
        time.sleep(0.1)
        assert checkpointer.checkpoints == 0  # fewer frames than asked for wait
        _write(connection, 40)
        assert wait_for(lambda: checkpointer.checkpoints >= 1, 5, 0.01)
        assert checkpoint.waiting_frames(fd) < 40
    finally:
        checkpointer.stop()
        os.close(fd)
        connection.close()
    assert checkpointer._thread is None  # joined


def test_under_steady_writes_the_wal_file_stays_small(tmp_path):
    """Commits keep SQLite's own checkpoint (1,000 frames) as the backstop: the thread's
    passive checkpoints leave it little to copy, and the WAL restarts from its start."""
    path = str(tmp_path / "s.db")
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=wal")
    connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    checkpointer = checkpoint.Checkpointer(path, frames=200).start()
    largest = 0
    try:
        for _ in range(12):
            _write(connection, 500)
            largest = max(largest, os.path.getsize(path + "-wal"))
    finally:
        checkpointer.stop()
        connection.close()
    assert checkpointer.checkpoints >= 1
    assert 0 < largest < 8 * 1024 * 1024  # 6,000 commits without a restart: ~24 MB


def test_only_sqlite_files_get_a_checkpointer(tmp_path):
    assert checkpoint.start(peewee.SqliteDatabase(":memory:"), 200) is None
    assert checkpoint.start(peewee.SqliteDatabase(str(tmp_path / "x.db")), 0) is None
    assert checkpoint.start(peewee.PostgresqlDatabase("test"), 200) is None
    started = checkpoint.start(peewee.SqliteDatabase(str(tmp_path / "x.db")), 200)
    try:
        assert started is not None and started._thread is not None
    finally:
        checkpoint.stop(started)
    checkpoint.stop(None)
