"""The runner threads of a worker process, and the jobs they hold.

Each runner claims its own jobs and writes outcomes together with its next claim, in one
transaction (the claim itself is one statement, see queue.claim_in_transaction). Long
jobs are claimed one at a time. Jobs of types that recently ran in a few milliseconds are
claimed up to BATCH_SIZE at a time and their outcomes written in one transaction; a runner
that gets stuck in a long job hands its unstarted jobs back to the queue and has its
finished outcomes written (by the heartbeat thread, ``flush_stuck``).
"""

import collections
import logging
import threading
import time
from collections.abc import Callable

from .. import loophealth
from ..db import db, is_postgres
from . import queue as jobqueue
from .handle import WorkerHandle
from .models import Job
from .outcomes import Written
from .runtime import Entry, Finished, JobContext, run_handler

log = logging.getLogger("commerce_api.worker")

# Short jobs (no-ops, cache hits) are claimed several at a time by a runner, and their
# outcomes written together with the next claim: one transaction for many jobs. A job type
# is short when its recent runs took less than this on average; unknown types are long.
SHORT_JOB_SECONDS = 0.005
BATCH_SIZE = 32
LANE_JOB_SECONDS = 0.001  # jobs this short are claimed and run by one runner (Lane)
BUSY_SECONDS = 1.0  # a runner busy this long hands its unstarted jobs and outcomes back
RUNNERS = "runners"  # the runners' name as the heartbeat reports them (loophealth)


class Runner:
    """One runner thread: what it claimed, runs and has finished (guarded by the pool's
    lock). ``main(runner)`` is the thread's body; the thread is not started here."""

    def __init__(self, number: int, main: Callable[["Runner"], None]) -> None:
        self.abandoned = False
        self.idle = False
        self.current = None  # the entry it runs now
        self.busy_since = 0.0
        self.drained = False  # its last claim emptied the queue
        self.local = collections.deque()  # claimed by it, not started yet
        self.pending: list[Finished] = []  # finished, not written yet
        self.thread = threading.Thread(
            target=main, args=(self,), name=f"job-runner-{number}", daemon=True
        )


class Lane:
    """The runner that claims and runs sub-millisecond jobs (``holder``; None: free).

    Such jobs (no-ops, cache hits) gain nothing from several threads of one process: they
    run Python under one GIL. And they lose much: every runner's claims and outcome writes
    take turns on the job writers' lock, and a runner holding that lock waits for the GIL
    after each SQLite call while the others run jobs. So one runner at a time claims and
    runs them; the others wait, and one takes the lane over when its holder meets a longer
    job, goes idle (the queue is empty) or is stuck.
    """

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock  # the pool's
        self.holder = None

    def take(self, runner: Runner) -> bool:
        """True when ``runner`` holds the lane (it had it, or it was free)."""
        with self._lock:
            if self.holder is None:
                self.holder = runner
            return self.holder is runner

    def drop(self, runner: Runner) -> bool:
        """True when ``runner`` held the lane (nobody does now)."""
        with self._lock:
            if self.holder is not runner:
                return False
            self.holder = None
            return True


class RunnerPool:
    """The worker's runner threads and every job the process holds (``Entry`` per job).

    It reads the worker's settings (``id``, ``app``, ``lease_ms``, ``poll_interval``,
    ``max_abandoned``) and ``stopping`` event from its handle, and calls its ``wake()``
    and ``exit_hung()``.
    """

    def __init__(self, worker: WorkerHandle) -> None:
        self.worker = worker
        self._stopping = worker.stopping
        self._lock = threading.Lock()
        self._work_ready = threading.Condition(self._lock)  # idle runners wait here
        self._inflight = {}  # (job id, attempt) -> Entry: every job this process holds
        self._wake_generation = 0
        self._lane = Lane(self._lock)
        self._durations = {}  # job type -> recent duration in seconds (moving average)
        self._runners = []
        self._runner_count = 0
        self._backoff = loophealth.Backoff()  # shared: the runners fail together
        self.failing = False  # the runners' last database step failed
        self.stats = {"completed": 0, "failed": 0, "retried": 0, "lost": 0, "given_back": 0}

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.stats[name] += n

    # Starting and waking --------------------------------------------------------------

    def add_runner(self) -> Runner:
        """Start one more runner thread."""
        self._runner_count += 1
        runner = Runner(self._runner_count, self._runner_main)
        with self._lock:
            self._runners.append(runner)
        runner.thread.start()
        return runner

    def notify(self, count: int = 1) -> None:
        """Wake idle runners; one is enough, since a runner whose claim came back full
        wakes the next (so a burst wakes them all, a single job only one)."""
        with self._work_ready:
            self._wake_generation += 1
            self._work_ready.notify(count)

    def wake_all(self) -> None:
        """Wake every idle runner (the worker stops)."""
        with self._work_ready:
            self._wake_generation += 1
            self._work_ready.notify_all()

    def any_idle(self) -> bool:
        with self._lock:
            return any(r.idle for r in self._runners)

    def all_idle(self) -> bool:
        """Every runner waits for work and no job is held."""
        with self._lock:
            runners_idle = all(r.idle for r in self._runners if not r.abandoned)
            held = any(not e.lost for e in self._inflight.values())
        return runners_idle and not held

    def held(self) -> list[Entry]:
        """The jobs this process holds (claimed or running, not lost)."""
        with self._lock:
            return [e for e in self._inflight.values() if not e.lost]

    # Job durations ----------------------------------------------------------------------

    def record_duration(self, job_type: str, seconds: float) -> None:
        """Fold one run's duration into the type's moving average."""
        previous = self._durations.get(job_type)
        self._durations[job_type] = seconds if previous is None else 0.8 * previous + 0.2 * seconds

    def _is_short(self, job_type):
        return self._durations.get(job_type, 1.0) < SHORT_JOB_SECONDS

    def _slowest(self):
        """The longest recent run (moving average) of the job types seen; 1 s before any."""
        return max(self._durations.values(), default=1.0)

    def _claim_size(self):
        return BATCH_SIZE if self._slowest() < SHORT_JOB_SECONDS else 1

    def lane_mode(self) -> bool:
        """Every job type seen lately runs in under LANE_JOB_SECONDS."""
        return self._slowest() < LANE_JOB_SECONDS

    def _drop_lane(self, runner, wake=True):
        """Give the lane up, if ``runner`` holds it; ``wake``: wake a runner to take it
        over (not when the holder goes idle because it found the queue empty)."""
        if self._lane.drop(runner) and wake and not self._stopping.is_set():
            self.notify()

    # Held jobs --------------------------------------------------------------------------

    def _accept(self, runner, jobs):
        entries = [Entry(job) for job in jobs]
        with self._lock:
            for entry in entries:
                entry.runner = runner
                self._inflight[entry.key] = entry
            runner.local.extend(entries)
        return bool(entries)

    def _release(self, entry):
        with self._lock:
            if self._inflight.get(entry.key) is entry:
                del self._inflight[entry.key]
        if self._stopping.is_set():
            self.worker.wake()  # the shutdown waits for this

    def _give_back(self, entries):
        for entry in entries:
            try:
                if jobqueue.give_back(entry.job, self.worker.id):
                    self._count("given_back")
                    log.info("job %s given back to the queue", entry.job.id)
            except Exception:
                log.exception("job %s: give back failed; its lease will run out", entry.job.id)

    def give_back_held(self) -> None:
        """At shutdown: the jobs still held go back to the queue; their runners' late
        outcomes are refused."""
        with self._lock:
            leftovers = [e for e in self._inflight.values() if not e.lost]
            for entry in leftovers:
                entry.lost = True  # its runner's outcome must not land any more
                del self._inflight[entry.key]
        self._give_back(leftovers)

    def renew_leases(self) -> bool:
        """Renew the leases of the jobs held; a job the renewal no longer finds is lost.
        True when some were held and renewed (the runners are busy, not stalled)."""
        entries = self.held()
        if not entries:
            return False
        worker = self.worker
        held = jobqueue.renew_leases(worker.id, [e.key for e in entries], worker.lease_ms)
        for entry in entries:
            if entry.key not in held:
                self.mark_lost(entry)
        return bool(held)

    def mark_lost(self, entry: Entry) -> None:
        """The job was taken from us: refuse its outcome, and replace its runner if stuck."""
        with self._lock:
            if entry.lost or self._inflight.get(entry.key) is not entry:
                return
            entry.lost = True
            del self._inflight[entry.key]
            runner = entry.runner
            replace = runner is not None and runner.current is entry and not runner.abandoned
            if replace:
                runner.abandoned = True
            hung = sum(1 for r in self._runners if r.abandoned and r.thread.is_alive())
        self._count("lost")
        log.warning("job %s attempt %s: lease lost", entry.job.id, entry.job.attempts)
        if replace:
            self._flush_runner(runner)  # its unstarted jobs and finished outcomes
            if not self._stopping.is_set():
                self._replace(hung)
        self.worker.wake()

    def _replace(self, hung):
        """A runner was abandoned in a hung job: start another, or, with ``hung`` threads
        past ``worker.max_abandoned``, have the worker exit (a thread cannot be killed)."""
        if hung <= self.worker.max_abandoned:
            self.add_runner()
        else:
            self.worker.exit_hung(hung)

    # A runner's loop --------------------------------------------------------------------

    def _idle_wait(self, runner, generation):
        """Wait for a wake-up newer than ``generation``."""
        with self._work_ready:
            runner.idle = True
            try:
                if self._wake_generation == generation and not self._stopping.is_set():
                    # the main loop wakes us; the time-out is only a safety net
                    self._work_ready.wait(max(5.0, self.worker.poll_interval))
            finally:
                runner.idle = False

    def _runner_main(self, runner):
        with self.worker.app.app_context():
            try:
                while True:
                    try:
                        self._runner_loop(runner)
                        return
                    except Exception as error:
                        # never a runner short for good: it goes on after a pause
                        log.exception("worker %s: a runner failed", self.worker.id)
                        if self._stopping.is_set() or runner.abandoned:
                            return
                        self._failed(error)
            finally:
                self._flush_runner(runner)
                if not db.is_closed():
                    db.close()

    def _runner_loop(self, runner):
        while True:
            entry = self._next_local(runner)
            if entry is None:
                stopping = self._stopping.is_set() or runner.abandoned
                with self._lock:
                    generation = self._wake_generation
                # After a claim that emptied the queue, don't claim again at once: wait
                # for the main loop's signal (a commit, then a due job). Claiming in a
                # loop as jobs trickle in would hold the write lock for one or two jobs
                # at a time, starving whoever dispatches them.
                claim = not stopping and not runner.drained
                runner.drained = False
                if not self.write_and_claim(runner, claim=claim):
                    self._drop_lane(runner, wake=False)
                    if stopping:
                        return
                    if is_postgres() and not db.is_closed():
                        db.close()  # back to the pool while idle
                    self._idle_wait(runner, generation)
                continue
            if self._durations.get(entry.job.type, 1.0) >= LANE_JOB_SECONDS:
                self._drop_lane(runner)  # another runner serves the queue meanwhile
            if runner.pending and not self._is_short(entry.job.type):
                self._write_pending(runner)  # don't hold finished work back behind this one
            with self._lock:
                runner.current, runner.busy_since = entry, time.monotonic()
            finished = self._run(entry)
            with self._lock:
                runner.current = None
                if finished is not None:
                    runner.pending.append(finished)
            if not self._is_short(entry.job.type) or (
                len(runner.pending) >= BATCH_SIZE and runner.local
            ):
                # (a full batch with nothing left to run goes with the next claim)
                self._write_pending(runner)
            if runner.abandoned:
                return

    def _next_local(self, runner):
        """The runner's next claimed job, or None; nothing new once stopping."""
        with self._lock:
            if self._stopping.is_set() or runner.abandoned:
                leftovers = [e for e in runner.local if not e.lost]
                runner.local.clear()
            else:
                while runner.local:
                    entry = runner.local.popleft()
                    if not entry.lost:
                        return entry
                return None
        if leftovers:  # claimed but not started: back to the queue at once
            for entry in leftovers:
                entry.lost = True
                self._release(entry)
            self._give_back(leftovers)
        return None

    def _run(self, entry):
        """Run the handler; the outcome to write, or None (the job was lost)."""
        job = entry.job
        worker = self.worker
        config = worker.app.config
        ctx = JobContext(
            entry, worker.id, config, worker.lease_seconds, worker.lease_ms, self.mark_lost
        )
        started = time.monotonic()
        outcome = run_handler(entry, ctx)
        self.record_duration(job.type, time.monotonic() - started)
        if outcome is None or entry.lost:
            if entry.lost and outcome is not None:
                log.warning(
                    "job %s attempt %s: finished after its lease was lost; outcome dropped",
                    job.id,
                    job.attempts,
                )
            self._release(entry)
            return None
        return Finished.of(entry, outcome, worker.id)

    # Writing outcomes and claiming ------------------------------------------------------

    def _take_pending(self, runner):
        with self._lock:
            pending, runner.pending = runner.pending, []
        return pending

    def write_and_claim(self, runner: Runner, claim: bool) -> bool:
        """Write the runner's outcomes and claim its next jobs; True when it got some."""
        pending = self._take_pending(runner)
        limit = self._claim_size() if claim else 0
        if limit and self.lane_mode() and not self._lane.take(runner):
            limit = 0  # the lane's holder claims these
        if not pending and not limit:
            return False
        worker = self.worker
        try:
            if not pending and not jobqueue.has_due_jobs():
                # woken with nothing to write, and another runner took what was due: a
                # read-only look instead of a write transaction that claims nothing
                self._passed()
                return False
            results, jobs = jobqueue.step(
                worker.id, [f.step_item() for f in pending], limit, worker.lease_ms
            )
        except Exception as error:
            log.exception("worker %s: writing outcomes or claiming failed", worker.id)
            for finished in pending:  # their leases run out and the sweeper retries them
                self._release(finished.entry)
            self._failed(error)
            return False
        self._passed()
        self._report(pending, results)
        if limit and len(jobs) == limit and self._lane.holder is not runner:
            self.notify()  # more may be waiting: wake the next runner
        runner.drained = bool(limit) and 0 < len(jobs) < limit
        return self._accept(runner, jobs)

    def _passed(self):
        self.failing = False
        loophealth.passed(RUNNERS)
        self._backoff.reset()

    def _failed(self, error):
        """A runner's database step failed: drop a broken connection, wait (backoff)."""
        self.failing = True
        loophealth.failed(RUNNERS)
        loophealth.drop_connection(error)
        self._stopping.wait(min(self._backoff.next_delay(), max(1.0, self.worker.poll_interval)))

    def _write_pending(self, runner):
        pending = self._take_pending(runner)
        if not pending:
            return
        worker = self.worker
        try:
            results, _ = jobqueue.step(
                worker.id, [f.step_item() for f in pending], 0, worker.lease_ms
            )
        except Exception as error:
            log.exception("worker %s: writing %s outcome(s) failed", worker.id, len(pending))
            for finished in pending:
                self._release(finished.entry)
            self.failing = True
            loophealth.failed(RUNNERS)
            loophealth.drop_connection(error)
            return
        self._passed()
        self._report(pending, results)

    def _flush_runner(self, runner):
        """Give back a runner's unstarted jobs and write its finished outcomes."""
        with self._lock:
            leftovers = [e for e in runner.local if not e.lost]
            runner.local.clear()
            for entry in leftovers:
                entry.lost = True
                self._inflight.pop(entry.key, None)
        self._give_back(leftovers)
        self._write_pending(runner)
        self._drop_lane(runner)

    def flush_stuck(self, busy_seconds: float) -> None:
        """Runners stuck in one job for ``busy_seconds``: flush what they hold besides."""
        now = time.monotonic()
        with self._lock:
            stuck = [
                r
                for r in self._runners
                if r.current is not None
                and now - r.busy_since >= busy_seconds
                and (r.local or r.pending or self._lane.holder is r)
            ]
        for runner in stuck:
            self._flush_runner(runner)

    def _report(self, pending, results):
        for finished, result in zip(pending, results, strict=True):
            self._release(finished.entry)
            job: Job = finished.entry.job
            if result is Written.COMPLETED:
                self._count("completed")
            elif result is Written.LOST:
                log.warning(
                    "job %s attempt %s: the lease was lost before its outcome was written",
                    job.id,
                    job.attempts,
                )
            else:  # failed or retrying: the outcome was an outcomes.Failed
                failed = finished.outcome
                self._count("failed" if result is Written.FAILED else "retried")
                log.warning(
                    "job %s (%s) attempt %s: %s: %s -> %s",
                    job.id,
                    job.type,
                    job.attempts,
                    failed.code,
                    failed.message,
                    result.value,
                )
