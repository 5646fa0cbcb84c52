"""What the worker keeps per job and per runner thread, and the ``ctx`` a handler gets."""

import collections
import logging
import threading
import time
import traceback

from . import queue as jobqueue
from . import registry
from .errors import JobFailed, JobLost

EXIT_HUNG = 3  # the exit status of a worker that stopped because its runners hung
log = logging.getLogger("commerce_api.worker")


def replace_or_exit(worker, hung):
    """A runner was abandoned in a hung job: start another, or, with ``hung`` threads past
    ``worker.max_abandoned``, stop the worker with EXIT_HUNG.

    A thread cannot be killed: past the limit the worker would run short of runners while
    still heartbeating. It exits instead, so the supervisor (or ``serve --with-worker``)
    starts a fresh process.
    """
    if hung <= worker.max_abandoned:
        worker._add_runner()
        return
    log.error(
        "worker %s: %s runner threads hung (limit %s); cannot keep concurrency %s,"
        " exiting with code %s",
        worker.id,
        hung,
        worker.max_abandoned,
        worker.concurrency,
        EXIT_HUNG,
    )
    worker.exit_code = EXIT_HUNG
    worker.stop()


class JobContext:
    """What a handler gets besides the job: heartbeat, progress, worker id, attempt."""

    def __init__(self, worker, entry):
        self._worker = worker
        self._entry = entry
        self.worker_id = worker.id
        self.attempt = entry.job.attempts
        self.config = worker.app.config
        self._last_renewal = time.monotonic()
        self._last_progress = 0.0

    @property
    def lost(self):
        return self._entry.lost

    @property
    def log(self):
        return logging.getLogger(f"commerce_api.jobs.{self._entry.job.type}")

    def heartbeat(self):
        """Renew the lease now; raise JobLost when the job is no longer ours."""
        if self._entry.lost:
            raise JobLost(self._entry.job.id)
        # the heartbeat thread renews anyway; don't hammer the database from tight loops
        if time.monotonic() - self._last_renewal < min(1.0, self._worker.lease_seconds / 10):
            return
        self._last_renewal = time.monotonic()
        job = self._entry.job
        held = jobqueue.renew_leases(
            self._worker.id, [(job.id, job.attempts)], self._worker.lease_ms
        )
        if not held:
            self._worker._mark_lost(self._entry)
            raise JobLost(job.id)

    def progress(self, done, total):
        """Report ``{done, total}`` (shown by GET /api/ai-jobs/:id) and renew the lease.

        Written at most twice a second, and always for the last step (done == total).
        """
        now = time.monotonic()
        if done < total and now - self._last_progress < 0.5:
            return
        self._last_progress = now
        job = self._entry.job
        if not jobqueue.record_progress(job.id, job.attempts, done, total):
            self._worker._mark_lost(self._entry)
            raise JobLost(job.id)
        self.heartbeat()


class Entry:
    """A job this process holds: prefetched, or running on a runner."""

    __slots__ = ("job", "runner", "lost")

    def __init__(self, job):
        self.job = job
        self.runner = None
        self.lost = False  # taken away (lease ran out) or given back: its outcome is void

    @property
    def key(self):
        return (self.job.id, self.job.attempts)


class Lane:
    """The runner that claims and runs sub-millisecond jobs (``holder``; None: free).

    Such jobs (no-ops, cache hits) gain nothing from several threads of one process: they
    run Python under one GIL. And they lose much: every runner's claims and outcome writes
    take turns on the job writers' lock, and a runner holding that lock waits for the GIL
    after each SQLite call while the others run jobs. So one runner at a time claims and
    runs them; the others wait, and one takes the lane over when its holder meets a longer
    job, goes idle (the queue is empty) or is stuck.
    """

    def __init__(self, lock):
        self._lock = lock  # the worker's
        self.holder = None

    def take(self, runner):
        """True when ``runner`` holds the lane (it had it, or it was free)."""
        with self._lock:
            if self.holder is None:
                self.holder = runner
            return self.holder is runner

    def drop(self, runner):
        """True when ``runner`` held the lane (nobody does now)."""
        with self._lock:
            if self.holder is not runner:
                return False
            self.holder = None
            return True


class Runner:
    def __init__(self, worker, number):
        self.abandoned = False
        self.idle = False
        self.current = None  # the entry it runs now
        self.busy_since = 0.0
        self.drained = False  # its last claim emptied the queue
        self.local = collections.deque()  # claimed by it, not started yet
        self.pending = []  # (entry, outcome) finished, not written yet
        self.thread = threading.Thread(
            target=worker._runner_main, args=(self,), name=f"job-runner-{number}", daemon=True
        )


def run_handler(worker, entry):
    """Run the entry's handler: ``("complete", result JSON text)``, ``("fail", (code,
    message, retryable, details))``, or None when the job was lost meanwhile."""
    job = entry.job
    handler = registry.get(job.type)
    if handler is None or handler.run is None:
        message = f"Job type {job.type!r} has no handler yet; it cannot run."
        return ("fail", ("JOB_TYPE_NOT_IMPLEMENTED", message, False, None))
    try:
        result = handler.run(job, JobContext(worker, entry))
    except JobLost:
        log.info("job %s: stopped after losing its lease", job.id)
        return None
    except JobFailed as failure:
        return ("fail", (failure.code, failure.message, failure.retryable, failure.details))
    except Exception:
        log.error("job %s (%s) raised:\n%s", job.id, job.type, traceback.format_exc())
        return (
            "fail",
            ("INTERNAL_ERROR", "The job failed with an unexpected error.", True, None),
        )
    if result is not None and not isinstance(result, dict):
        message = "The job handler returned something other than an object."
        return ("fail", ("INTERNAL_ERROR", message, False, None))
    try:
        return ("complete", jobqueue.encode_result(result))
    except (TypeError, ValueError) as exc:
        log.error("job %s: result is not JSON: %s", job.id, exc)
        message = "The job result could not be stored."
        return ("fail", ("INTERNAL_ERROR", message, False, None))
