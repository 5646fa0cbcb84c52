"""Readiness: does the database answer within a second, and is its schema current?

The probe runs on a thread of its own so that a database that hangs (a dropped network,
a host that does not answer) costs the caller one second, not a TCP time-out. One probe
runs at a time per process: while a hung one is still waiting, later checks wait behind
it and report the database unavailable after their second as well.
"""

import contextvars
import json
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

import peewee
from flask import current_app

from .. import crypto
from ..db import db
from ..jobs.models import WorkerProcess
from ..migrations import pending
from ..sql import Statement
from ..timeutil import now_ms

TIMEOUT_SECONDS = 1.0

_NEWEST_HEARTBEAT = Statement("SELECT MAX({W.last_seen_at}) FROM {W}", W=WorkerProcess)
_WORKER_LOOPS = Statement(
    "SELECT {W.id}, {W.started_at}, {W.loops} FROM {W} WHERE {W.stopping} = {p:stopping}"
    " ORDER BY {W.id}",
    W=WorkerProcess,
)
_probe_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="readiness")


@dataclass
class Readiness:
    ready: bool
    checks: dict
    worker_heartbeat_age_seconds: float | None


@dataclass
class LoopAge:
    """One loop of one live worker and the seconds since its last successful pass."""

    worker: str
    loop: str
    seconds_since_pass: float


def worker_loops() -> list[LoopAge]:
    """Every loop of every running (not stopping) worker, with the age of its last pass
    as the worker's heartbeat last wrote it (a worker cut off from the database writes
    nothing: its loops age)."""
    now = now_ms()
    ages = []
    for worker, started, loops in _WORKER_LOOPS.execute({"stopping": False}).fetchall():
        loops = json.loads(loops) if loops else {}
        for name, last in sorted(loops.items()):
            last = last or started  # no successful pass yet: counted from the start
            ages.append(LoopAge(worker, name, round(max(0, now - last) / 1000, 1)))
    return ages


def _workers_check(loops, stall_seconds):
    """``{status: ok|stalled|none, stalled: [...]}``: loops without a pass for longer
    than ``WORKER_STALL_SECONDS``."""
    if not loops:
        return {"status": "none", "stalled": []}
    stalled = [
        {"worker": a.worker, "loop": a.loop, "seconds_since_pass": a.seconds_since_pass}
        for a in loops
        if a.seconds_since_pass > stall_seconds
    ]
    return {"status": "stalled" if stalled else "ok", "stalled": stalled}


def _probe():
    """Run on the probe thread: (latency in ms, pending migrations, newest heartbeat ms,
    the workers' loops)."""
    started = time.monotonic()
    with db.connection_context():
        db.execute_sql("SELECT 1").fetchall()
        latency_ms = round((time.monotonic() - started) * 1000, 1)
        waiting = pending(db.obj)
        heartbeat = None
        loops = []
        keys = None
        if not waiting:
            heartbeat = _NEWEST_HEARTBEAT.execute().fetchone()[0]
            loops = worker_loops()
            keys = crypto.key_check()
    return latency_ms, waiting, heartbeat, loops, keys


def check_readiness() -> Readiness:
    """The database and migrations checks, the age of the newest worker heartbeat, and
    the worker loops not making progress (reported; they do not make this host unready:
    it can still serve requests)."""
    stall_seconds = float(current_app.config["WORKER_STALL_SECONDS"])
    # the probe runs in this request's context (the app's settings: COMMERCE_SECRET_KEY)
    future = _probe_thread.submit(contextvars.copy_context().run, _probe)
    try:
        latency_ms, waiting, heartbeat, loops, keys = future.result(timeout=TIMEOUT_SECONDS)
    except FutureTimeout:
        return _unavailable(f"no answer within {TIMEOUT_SECONDS:g} s")
    except peewee.PeeweeException as error:  # refused, shut down, no such file, ...
        return _unavailable(str(error).strip().splitlines()[0][:200])
    database = {"status": "ok", "latency_ms": latency_ms}
    migrations = {"status": "pending", "pending": waiting} if waiting else {"status": "ok"}
    age = None if heartbeat is None else round(max(0, now_ms() - heartbeat) / 1000, 1)
    checks = {
        "database": database,
        "migrations": migrations,
        "secrets": _secrets_check(keys),
        "workers": _workers_check(loops, stall_seconds),
    }
    return Readiness(not waiting and not (keys and keys.reads_none), checks, age)


def _secrets_check(keys):
    """Does COMMERCE_SECRET_KEY read the stored secrets? (A host whose key reads none of
    them is not ready: it would fail every secret it uses and must write none.)"""
    if keys is None:
        return {"status": "unknown"}
    if keys.reads_none:
        return {"status": "unreadable", "error": keys.message()}
    return {"status": "ok", "sampled": keys.sampled, "readable": keys.readable}


def _unavailable(reason):
    checks = {
        "database": {"status": "unavailable", "error": reason},
        "migrations": {"status": "unknown"},
        "secrets": {"status": "unknown"},
        "workers": {"status": "unknown", "stalled": []},
    }
    return Readiness(False, checks, None)
