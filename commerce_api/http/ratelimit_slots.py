"""Rate-limit counters of a SQLite deployment in a shared memory-mapped file of their own.

One host runs every process of a SQLite deployment, so its counters can live in a file
beside the database that every process maps: ``<database>-ratelimit-slots``, a fixed
table of slots, one per caller, found by a hash of the caller's key (linear probing). A
count is a few memory reads and writes under the writers' ``flock`` turn
(``filelock.Turns``), against about 30 µs for an UPSERT and commit in a SQLite file of its
own; the main database's file, caches and write lock are never touched either way.

Each slot holds the caller's key (exact matching, and ``rows()`` for inspection) and the
same four numbers as a ``rate_limit_counter`` row; the same rules as the SQL UPSERT apply.
A slot whose hour window has passed is free again. A caller that finds no slot within
``PROBES`` (thousands of callers active within the hour) is counted in the SQLite counter
file (``<database>-ratelimit``) instead, and stays there while its row there is live, so
that no caller is ever counted in two places. A process killed in the middle of a count can
leave that one slot off by one, which is all a counter is worth after a crash.
"""

import hashlib
import mmap
import os
import struct
from typing import Any

from ..filelock import Turns

SLOTS = 16_384
PROBES = 64
SLOT = struct.Struct("<16sqqqqH206s")  # digest, 4 counts, key length, key: 256 bytes
TAIL = struct.Struct("<qqqqH206s")  # a slot after its digest
COUNTS = struct.Struct("<qqqq")
HEADER = struct.Struct("<8sII")  # magic, slots, slot size
MAGIC = b"CRLSLOT1"
EMPTY = bytes(16)


def _key_bytes(key):
    raw = key.encode()
    return raw if len(raw) <= 206 else hashlib.sha256(raw).hexdigest().encode()


class SlotFileCounter:
    """Counters in ``path`` (created on first use), the overflow in ``overflow``."""

    def __init__(self, path, overflow_path, make_overflow):
        self.path = path
        self.overflow_path = overflow_path  # a SqliteFileCounter's, used only past PROBES
        self._make_overflow = make_overflow
        self._overflow = None
        self._turns = Turns(f"{path}.lock")
        size = HEADER.size + SLOTS * SLOT.size
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            with self._turns.turn():
                if os.fstat(fd).st_size == 0:  # new: zeros, every slot empty
                    os.ftruncate(fd, size)
                    os.pwrite(fd, HEADER.pack(MAGIC, SLOTS, SLOT.size), 0)
            header = HEADER.unpack(os.pread(fd, HEADER.size, 0))
            if header != (MAGIC, SLOTS, SLOT.size) or os.fstat(fd).st_size != size:
                raise RuntimeError(f"{path} is not a rate-limit slot file of this version")
            # MAP_SHARED: every process (forked or not) sees the same counts
            self.map = mmap.mmap(fd, size)
        finally:
            os.close(fd)

    def _find(self, digest, raw, hour):
        """(offset of the key's slot or None, offset of a free slot or None)."""
        mapped = self.map
        start = int.from_bytes(digest[:8], "little") % SLOTS
        free = None
        for probe in range(PROBES):
            offset = HEADER.size + ((start + probe) % SLOTS) * SLOT.size
            stored = mapped[offset : offset + 16]
            if stored == digest:
                fields = SLOT.unpack_from(mapped, offset)
                if fields[6][: fields[5]] == raw:
                    return offset, None
            if stored == EMPTY:
                return None, free if free is not None else offset
            if free is None and SLOT.unpack_from(mapped, offset)[3] < hour:
                free = offset  # a past hour's caller: reusable, but keep looking for ours
        return None, free

    def acquire(
        self, key: str, windows: tuple[int, int], amounts: tuple[int, int]
    ) -> tuple[bool, tuple[tuple[int, int], tuple[int, int]]]:
        """As ``DatabaseCounter.acquire``: count one request in both windows if both have
        room; ``(allowed, ((minute_window, count), (hour_window, count)))``."""
        minute, hour = windows
        raw = _key_bytes(key)
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        if digest == EMPTY:  # pragma: no cover - one chance in 2**128
            digest = b"\x01" + digest[1:]
        with self._turns.turn():
            offset, free = self._find(digest, raw, hour)
            if offset is None:
                if free is None or self._in_overflow(key, hour):
                    return self.overflow().acquire(key, windows, amounts)
                # the digest last: cut short, the slot matches nobody and keeps its chain
                TAIL.pack_into(self.map, free + 16, minute, 1, hour, 1, len(raw), raw)
                self.map[free : free + 16] = digest
                return True, ((minute, 1), (hour, 1))
            _, mw, mc, hw, hc, _, _ = SLOT.unpack_from(self.map, offset)
            if (mw < minute or mc < amounts[0]) and (hw < hour or hc < amounts[1]):
                counted = (
                    (mw, mc + 1) if mw >= minute else (minute, 1),
                    (hw, hc + 1) if hw >= hour else (hour, 1),
                )
                COUNTS.pack_into(self.map, offset + 16, *counted[0], *counted[1])
                return True, counted
            return False, (
                (mw, mc) if mw >= minute else (minute, 0),
                (hw, hc) if hw >= hour else (hour, 0),
            )

    def overflow(self) -> Any:
        """The SQLite counter file (``SqliteFileCounter``) for callers without a slot."""
        if self._overflow is None:
            self._overflow = self._make_overflow(self.overflow_path)
        return self._overflow

    def _in_overflow(self, key, hour):
        """Whether ``key`` has a live row in the overflow file (only ever looked at for a
        key without a slot, and only once the overflow file exists)."""
        if not os.path.exists(self.overflow_path):
            return False
        row = self.overflow().read(key)
        return row is not None and row[2] >= hour

    def rows(self) -> list[dict[str, Any]]:
        """Every occupied slot as a ``rate_limit_counter`` row (tests, inspection)."""
        found = []
        with self._turns.turn():
            for index in range(SLOTS):
                fields = SLOT.unpack_from(self.map, HEADER.size + index * SLOT.size)
                if fields[0] != EMPTY:
                    found.append(
                        {
                            "counter_key": fields[6][: fields[5]].decode(),
                            "minute_window": fields[1],
                            "minute_count": fields[2],
                            "hour_window": fields[3],
                            "hour_count": fields[4],
                        }
                    )
        return found

    def clear(self) -> None:
        """Empty every slot (tests)."""
        with self._turns.turn():
            self.map[HEADER.size :] = bytes(SLOTS * SLOT.size)
