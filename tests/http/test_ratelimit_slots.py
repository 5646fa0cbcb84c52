"""The slot file that holds a SQLite deployment's rate-limit counts (``ratelimit_slots``)."""

import multiprocessing
import os

import pytest

from commerce_api.http import ratelimit_slots
from commerce_api.http.ratelimit import SqliteFileCounter
from commerce_api.http.ratelimit_slots import SlotFileCounter

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

MINUTE, HOUR = 29_000_000, 483_333  # window numbers (Unix time // 60, // 3600)


def make(tmp_path, name="db"):
    base = str(tmp_path / name)
    return SlotFileCounter(f"{base}-ratelimit-slots", f"{base}-ratelimit", SqliteFileCounter)


def test_counts_like_the_sql_upsert(tmp_path):
    counter = make(tmp_path)
    for n in range(1, 4):
        assert counter.acquire("k:a", (MINUTE, HOUR), (3, 10)) == (True, ((MINUTE, n), (HOUR, n)))
    # full minute: refused, nothing counted, the current counts reported
    assert counter.acquire("k:a", (MINUTE, HOUR), (3, 10)) == (False, ((MINUTE, 3), (HOUR, 3)))
    # the next minute starts at 1, the hour goes on
    assert counter.acquire("k:a", (MINUTE + 1, HOUR), (3, 10)) == (
        True,
        ((MINUTE + 1, 1), (HOUR, 4)),
    )
    # a caller whose clock lags counts into the newer window, never resets it
    assert counter.acquire("k:a", (MINUTE, HOUR), (3, 10)) == (True, ((MINUTE + 1, 2), (HOUR, 5)))
    # another caller has its own count
    assert counter.acquire("k:b", (MINUTE, HOUR), (3, 10)) == (True, ((MINUTE, 1), (HOUR, 1)))
    rows = {row["counter_key"]: row for row in counter.rows()}
    assert rows["k:a"]["hour_count"] == 5 and rows["k:b"]["minute_count"] == 1


def test_a_full_hour_refuses_whatever_the_minute(tmp_path):
    counter = make(tmp_path)
    for minute in range(MINUTE, MINUTE + 4):
        assert counter.acquire("k:a", (minute, HOUR), (10, 4))[0]
    allowed, state = counter.acquire("k:a", (MINUTE + 5, HOUR), (10, 4))
    assert not allowed and state == ((MINUTE + 5, 0), (HOUR, 4))


def test_a_long_key_is_stored_hashed_and_still_exact(tmp_path):
    counter = make(tmp_path)
    long_key = "u:" + "é" * 150  # 302 bytes of UTF-8
    assert counter.acquire(long_key, (MINUTE, HOUR), (5, 5))[1][0] == (MINUTE, 1)
    assert counter.acquire(long_key, (MINUTE, HOUR), (5, 5))[1][0] == (MINUTE, 2)
    assert counter.acquire(long_key[:-1], (MINUTE, HOUR), (5, 5))[1][0] == (MINUTE, 1)


def test_a_full_table_counts_in_the_overflow_file_and_keeps_each_caller_in_one_place(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(ratelimit_slots, "SLOTS", 4)
    monkeypatch.setattr(ratelimit_slots, "PROBES", 4)
    counter = make(tmp_path)
    for key in ("k:1", "k:2", "k:3", "k:4"):
        assert counter.acquire(key, (MINUTE, HOUR), (5, 5))[0]
    assert not os.path.exists(counter.overflow_path)
    # a fifth caller finds no slot: counted in the SQLite overflow file, exactly
    for n in range(1, 6):
        assert counter.acquire("k:5", (MINUTE, HOUR), (5, 5)) == (
            True,
            ((MINUTE, n), (HOUR, n)),
        )
    assert not counter.acquire("k:5", (MINUTE, HOUR), (5, 5))[0]
    assert {row["counter_key"] for row in counter.rows()} == {"k:1", "k:2", "k:3", "k:4"}
    # the next hour every slot is free again; k:5's overflow row is past, so it takes a slot
    assert counter.acquire("k:6", (MINUTE + 60, HOUR + 1), (5, 5))[0]
    assert counter.acquire("k:5", (MINUTE + 60, HOUR + 1), (5, 5)) == (
        True,
        ((MINUTE + 60, 1), (HOUR + 1, 1)),
    )
    keys = {row["counter_key"] for row in counter.rows()}
    assert {"k:5", "k:6"} <= keys and len(keys) == 4


def test_a_caller_with_a_live_overflow_row_stays_there(tmp_path, monkeypatch):
    monkeypatch.setattr(ratelimit_slots, "SLOTS", 2)
    monkeypatch.setattr(ratelimit_slots, "PROBES", 2)
    counter = make(tmp_path)
    counter.acquire("k:1", (MINUTE, HOUR - 1), (9, 9))  # a past hour: its slot is reusable
    counter.acquire("k:2", (MINUTE, HOUR), (9, 9))
    counter.overflow().acquire("k:3", (MINUTE, HOUR), (9, 9))  # as if the table had been full
    # k:1's slot is free, but k:3 has a live count in the overflow file: it goes on there
    assert counter.acquire("k:3", (MINUTE, HOUR), (9, 9)) == (True, ((MINUTE, 2), (HOUR, 2)))
    assert "k:3" not in {row["counter_key"] for row in counter.rows()}


def _count_many(path, overflow, n, queue):
    counter = SlotFileCounter(path, overflow, SqliteFileCounter)
    allowed = sum(counter.acquire("k:shared", (MINUTE, HOUR), (250, 1000))[0] for _ in range(n))
    queue.put(allowed)


def test_processes_share_one_exact_count(tmp_path):
    """Four processes, 100 counts each against a limit of 250: exactly 250 allowed."""
    counter = make(tmp_path)
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [
        context.Process(target=_count_many, args=(counter.path, counter.overflow_path, 100, queue))
        for _ in range(4)
    ]
    for process in processes:
        process.start()
    allowed = sum(queue.get(timeout=60) for _ in processes)
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0
    assert allowed == 250
    (row,) = counter.rows()
    assert (row["minute_count"], row["hour_count"]) == (250, 250)


def test_a_file_of_another_layout_is_refused(tmp_path):
    path = tmp_path / "db-ratelimit-slots"
    path.write_bytes(b"x" * 64)
    with pytest.raises(RuntimeError, match="not a rate-limit slot file"):
        make(tmp_path)
