"""Readiness: does the database answer within a second, and is its schema current?

The probe runs on a thread of its own so that a database that hangs (a dropped network,
a host that does not answer) costs the caller one second, not a TCP time-out. One probe
runs at a time per process: while a hung one is still waiting, later checks wait behind
it and report the database unavailable after their second as well.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

import peewee

from ..db import db
from ..jobs.models import WorkerProcess
from ..migrations import pending
from ..sql import Statement
from ..timeutil import now_ms

TIMEOUT_SECONDS = 1.0

_NEWEST_HEARTBEAT = Statement("SELECT MAX({W.last_seen_at}) FROM {W}", W=WorkerProcess)
_probe_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="readiness")


@dataclass
class Readiness:
    ready: bool
    checks: dict
    worker_heartbeat_age_seconds: float | None


def _probe():
    """Run on the probe thread: (latency in ms, pending migrations, newest heartbeat ms)."""
    started = time.monotonic()
    with db.connection_context():
        db.execute_sql("SELECT 1").fetchall()
        latency_ms = round((time.monotonic() - started) * 1000, 1)
        waiting = pending(db.obj)
        heartbeat = None
        if not waiting:
            heartbeat = _NEWEST_HEARTBEAT.execute().fetchone()[0]
    return latency_ms, waiting, heartbeat


def check_readiness() -> Readiness:
    """The database and migrations checks, and the age of the newest worker heartbeat."""
    future = _probe_thread.submit(_probe)
    try:
        latency_ms, waiting, heartbeat = future.result(timeout=TIMEOUT_SECONDS)
    except FutureTimeout:
        return _unavailable(f"no answer within {TIMEOUT_SECONDS:g} s")
    except peewee.PeeweeException as error:  # refused, shut down, no such file, ...
        return _unavailable(str(error).strip().splitlines()[0][:200])
    database = {"status": "ok", "latency_ms": latency_ms}
    migrations = {"status": "pending", "pending": waiting} if waiting else {"status": "ok"}
    age = None if heartbeat is None else round(max(0, now_ms() - heartbeat) / 1000, 1)
    checks = {"database": database, "migrations": migrations}
    return Readiness(not waiting, checks, age)


def _unavailable(reason):
    checks = {
        "database": {"status": "unavailable", "error": reason},
        "migrations": {"status": "unknown"},
    }
    return Readiness(False, checks, None)
