"""The job worker: one process, N runner threads, a heartbeat thread and a main loop.

- Each runner claims its own jobs and writes outcomes together with its next claim, in
  one transaction (the claim itself is one statement, see queue.claim_in_transaction).
  Long jobs are claimed one at a time. Jobs of types that recently ran in a few
  milliseconds are claimed up to BATCH_SIZE at a time and their outcomes written in one
  transaction; a runner that gets stuck in a long job hands its unstarted jobs back to
  the queue and has its finished outcomes written (by the heartbeat thread).
- The main loop sweeps expired leases, starts due periodic tasks, and wakes idle runners
  when new work is signalled: PostgreSQL LISTEN/NOTIFY; on SQLite a change of
  ``PRAGMA data_version`` followed by a read-only probe; and every poll interval.
- The heartbeat thread renews the leases of the jobs held (and of running periodic tasks)
  every third of the lease. A job the renewal no longer finds was taken away: its runner
  is abandoned (its late outcome would be refused by the fence anyway) and replaced.
- SIGTERM/SIGINT: claim nothing new, let running jobs finish within the grace period,
  give the rest back without spending an attempt, exit 0. A second signal exits at once.
"""

import logging
import os
import random
import secrets
import signal
import socket
import threading
import time

from .. import checkpoint
from ..db import db, is_postgres
from . import queue as jobqueue
from . import registry
from .periodic_runs import PeriodicRuns
from .runtime import Entry, Lane, Runner, replace_or_exit, run_handler
from .wakeup import WakeUp

log = logging.getLogger("commerce_api.worker")

PERIODIC_CHECK_SECONDS = 1.0
PRUNE_WORKERS_SECONDS = 60.0
# Short jobs (no-ops, cache hits) are claimed several at a time by a runner, and their
# outcomes written together with the next claim: one transaction for many jobs. A job type
# is short when its recent runs took less than this on average; unknown types are long.
SHORT_JOB_SECONDS = 0.005
BATCH_SIZE = 32
LANE_JOB_SECONDS = 0.001  # jobs this short are claimed and run by one runner (runtime.Lane)
BUSY_SECONDS = 1.0  # a runner busy this long hands its unstarted jobs and outcomes back


class Worker:
    def __init__(
        self,
        app,
        concurrency=None,
        poll_interval=None,
        once=False,
        install_signals=True,
        grace_seconds=None,
    ):
        config = app.config
        self.app = app
        self.concurrency = max(1, int(concurrency or config["WORKER_CONCURRENCY"]))
        interval = poll_interval if poll_interval is not None else config["WORKER_POLL_INTERVAL"]
        self.poll_interval = max(0.01, float(interval))
        self.once = once
        self.install_signals = install_signals
        self.lease_seconds = float(config["WORKER_LEASE_SECONDS"])
        self.lease_ms = int(self.lease_seconds * 1000)
        self.heartbeat_seconds = max(0.05, self.lease_seconds / 3)
        self.sweep_seconds = max(0.1, self.lease_seconds / 2)
        grace = grace_seconds
        if grace is None:
            grace = config["WORKER_SHUTDOWN_GRACE_SECONDS"]
        self.grace_seconds = float(grace)
        self.id = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        # hung runner threads (cannot be killed) the worker tolerates before it exits
        self.max_abandoned = int(config["WORKER_MAX_HUNG_RUNNERS"]) or self.concurrency * 4
        self.exit_code = 0

        self._lock = threading.Lock()
        self._work_ready = threading.Condition(self._lock)  # idle runners wait here
        self._inflight = {}  # (job id, attempt) -> Entry: every job this process holds
        self._wake_generation = 0
        self._lane = Lane(self._lock)
        self._durations = {}  # job type -> recent duration in seconds (moving average)
        self._runners = []
        self._runner_count = 0
        self._periodic = PeriodicRuns(self)
        self._services = []  # threads of the registry's services (not with ``once``)
        self._stopping = threading.Event()
        self._stop_heartbeat = threading.Event()
        self._signals = 0
        self._wakeup = WakeUp(self.id, self.poll_interval)
        self._previous_handlers = {}
        self._opened_connection = False
        self._heartbeat_thread = self._checkpointer = None
        self.stats = {"completed": 0, "failed": 0, "retried": 0, "lost": 0, "given_back": 0}

    # Public ---------------------------------------------------------------------------

    def run(self):
        """Run until stopped (or, with ``once``, until nothing is due); returns 0, or
        ``EXIT_HUNG`` when it stopped because too many runners hung (see ``_mark_lost``)."""
        with self.app.app_context():
            try:
                self._start()
                self._loop()
                if self.once:
                    self._run_services_once()
            finally:
                self._shutdown()
        return self.exit_code

    def stop(self):
        """Ask the worker to stop gracefully (what SIGTERM does)."""
        self._stopping.set()
        self._wake()
        with self._work_ready:
            self._wake_generation += 1
            self._work_ready.notify_all()

    def _count(self, name, n=1):
        with self._lock:
            self.stats[name] += n

    # Start and stop -------------------------------------------------------------------

    def _start(self):
        if self.install_signals and threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._previous_handlers[signum] = signal.signal(signum, self._on_signal)
        self._opened_connection = db.connect(reuse_if_open=True)
        jobqueue.register_worker(self.id, socket.gethostname(), os.getpid(), self.concurrency)
        self._periodic.load()
        self._wakeup.open_listener()
        # SQLite: WAL checkpoints from a thread, not from commits holding the writers' lock
        self._checkpointer = checkpoint.start(db.obj, self.app.config["SQLITE_CHECKPOINT_FRAMES"])
        self._heartbeat_thread = threading.Thread(
            target=self._heartbeat_main, name="job-heartbeat", daemon=True
        )
        self._heartbeat_thread.start()
        for _ in range(self.concurrency):
            self._add_runner()
        if not self.once:
            for name, func in registry.SERVICES.items():
                thread = threading.Thread(
                    target=self._service_main, args=(name, func), name=name, daemon=True
                )
                thread.start()
                self._services.append(thread)
        log.info(
            "worker %s started: concurrency %s, lease %ss, poll %ss, %s periodic task(s)%s",
            self.id,
            self.concurrency,
            self.lease_seconds,
            self.poll_interval,
            len(self._periodic.tasks),
            " (once)" if self.once else "",
        )

    def _on_signal(self, signum, frame):
        self._signals += 1
        if self._signals > 1:
            # the second signal: leave now; running jobs come back through their leases
            os.write(2, b"worker: second signal, exiting at once\n")
            os._exit(1)
        log.info("worker %s: %s, finishing running jobs", self.id, signal.Signals(signum).name)
        # no lock here: a handler runs in the main thread, which may hold the worker's lock
        # (waking runners); the main loop sees the event, and its shutdown wakes the runners
        self._stopping.set()
        self._wake()

    def _shutdown(self):
        self.stop()
        self._guard(jobqueue.touch_worker, self.id, True)
        deadline = time.monotonic() + self.grace_seconds
        while time.monotonic() < deadline and (self._held() or self._periodic.alive()):
            self._wakeup.wait(min(0.05, max(0.0, deadline - time.monotonic())))
        self._flush_stuck(0)  # finished work is written, not given back
        with self._lock:
            leftovers = [e for e in self._inflight.values() if not e.lost]
            for entry in leftovers:
                entry.lost = True  # its runner's outcome must not land any more
                del self._inflight[entry.key]
        self._give_back(leftovers)
        for thread in self._services:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._periodic.release_interrupted()
        self._stop_heartbeat.set()
        self._guard(jobqueue.deregister_worker, self.id)
        checkpoint.stop(self._checkpointer)
        if self._opened_connection and not db.is_closed():
            db.close()
        for signum, handler in self._previous_handlers.items():
            signal.signal(signum, handler)
        self._wakeup.close()
        log.info("worker %s stopped: %s", self.id, self.stats)

    def _service_main(self, name, func, stop=None):
        with self.app.app_context():
            try:
                func(stop or self._stopping)
            except Exception:
                log.exception("worker %s: service %s failed", self.id, name)
            finally:
                if not db.is_closed() and threading.current_thread() is not threading.main_thread():
                    db.close()

    def _run_services_once(self):
        """``--once``: one pass of every service, after the queue is drained."""
        done = threading.Event()
        done.set()
        for name, func in registry.SERVICES.items():
            self._service_main(name, func, stop=done)

    def _give_back(self, entries):
        for entry in entries:
            try:
                if jobqueue.give_back(entry.job, self.id):
                    self._count("given_back")
                    log.info("job %s given back to the queue", entry.job.id)
            except Exception:
                log.exception("job %s: give back failed; its lease will run out", entry.job.id)

    # The main loop --------------------------------------------------------------------

    def _loop(self):
        next_sweep = 0.0
        next_periodic = 0.0
        next_prune = time.monotonic() + PRUNE_WORKERS_SECONDS
        next_poll = time.monotonic() + self.poll_interval
        while not self._stopping.is_set():
            now = time.monotonic()
            if now >= next_sweep:
                swept = self._guard(jobqueue.sweep_expired_leases)
                if swept and swept["retrying"]:
                    self._notify_runners()
                next_sweep = now + self.sweep_seconds * random.uniform(0.8, 1.2)
            if now >= next_prune:
                self._guard(jobqueue.prune_workers, 10 * self.lease_ms + 60_000)
                next_prune = now + PRUNE_WORKERS_SECONDS
            if self._periodic.tasks and now >= next_periodic:
                self._periodic.start_due()
                next_periodic = now + PERIODIC_CHECK_SECONDS
            if (
                self.once
                and self._all_idle()
                and not self._guard(jobqueue.has_due_jobs)
                and self._all_idle()  # still: nobody woke up meanwhile
            ):
                break
            if now >= next_poll:
                # due retries, and anything no signal announced (a read-only probe)
                if self._any_idle() and self._guard(jobqueue.has_due_jobs):
                    self._notify_runners()
                next_poll = now + self.poll_interval
            timeout = min(next_sweep, next_poll) - time.monotonic()
            if self._periodic.tasks:
                timeout = min(timeout, next_periodic - time.monotonic())
            if self.once:
                timeout = min(timeout, 0.02)
            if self._wait_for_work(max(0.0, timeout)):
                self._notify_runners()

    def _all_idle(self):
        """(--once) Every runner waits for work and nothing is held or running."""
        with self._lock:
            runners_idle = all(r.idle for r in self._runners if not r.abandoned)
            held = any(not e.lost for e in self._inflight.values())
        if not runners_idle or held or self._periodic.alive():
            return False
        return not self._periodic.any_due()

    def _guard(self, func, *args):
        """Run a maintenance step; a database error is logged, never fatal."""
        try:
            return func(*args)
        except Exception:
            log.exception("worker %s: %s failed", self.id, getattr(func, "__name__", func))
            time.sleep(min(1.0, self.poll_interval))
            return None

    # Waiting and waking ---------------------------------------------------------------

    def _notify_runners(self, count=1):
        """Wake idle runners; one is enough, since a runner whose claim came back full
        wakes the next (so a burst wakes them all, a single job only one)."""
        with self._work_ready:
            self._wake_generation += 1
            self._work_ready.notify(count)

    def _wake(self):
        self._wakeup.wake()

    def _wait_for_work(self, timeout):
        """Sleep up to ``timeout``; True when new work may have arrived meanwhile."""
        return self._wakeup.wait_for_work(
            timeout, self._stopping, self._any_idle, lambda: self._guard(jobqueue.has_due_jobs)
        )

    def _any_idle(self):
        with self._lock:
            return any(r.idle for r in self._runners)

    # Runners --------------------------------------------------------------------------

    def _held(self):
        with self._lock:
            return [e for e in self._inflight.values() if not e.lost]

    def _add_runner(self):
        self._runner_count += 1
        runner = Runner(self, self._runner_count)
        with self._lock:
            self._runners.append(runner)
        runner.thread.start()
        return runner

    def _is_short(self, job_type):
        return self._durations.get(job_type, 1.0) < SHORT_JOB_SECONDS

    def _slowest(self):
        """The longest recent run (moving average) of the job types seen; 1 s before any."""
        return max(self._durations.values(), default=1.0)

    def _claim_size(self):
        return BATCH_SIZE if self._slowest() < SHORT_JOB_SECONDS else 1

    def _lane_mode(self):
        """Every job type seen lately runs in under LANE_JOB_SECONDS."""
        return self._slowest() < LANE_JOB_SECONDS

    def _drop_lane(self, runner, wake=True):
        """Give the lane up, if ``runner`` holds it; ``wake``: wake a runner to take it
        over (not when the holder goes idle because it found the queue empty)."""
        if self._lane.drop(runner) and wake and not self._stopping.is_set():
            self._notify_runners()

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
            self._wake()  # the shutdown waits for this

    def _idle_wait(self, runner, generation):
        """Wait for a wake-up newer than ``generation``."""
        with self._work_ready:
            runner.idle = True
            try:
                if self._wake_generation == generation and not self._stopping.is_set():
                    # the main loop wakes us; the time-out is only a safety net
                    self._work_ready.wait(max(5.0, self.poll_interval))
            finally:
                runner.idle = False

    def _mark_lost(self, entry):
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
                replace_or_exit(self, hung)
        self._wake()

    def _runner_main(self, runner):
        with self.app.app_context():
            try:
                self._runner_loop(runner)
            except Exception:
                log.exception("worker %s: a runner failed", self.id)
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
                if not self._write_and_claim(runner, claim=claim):
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
            outcome = self._run(entry)
            with self._lock:
                runner.current = None
                if outcome is not None:
                    runner.pending.append(outcome)
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

    def _take_pending(self, runner):
        with self._lock:
            pending, runner.pending = runner.pending, []
        return pending

    def _write_and_claim(self, runner, claim):
        """Write the runner's outcomes and claim its next jobs; True when it got some."""
        pending = self._take_pending(runner)
        limit = self._claim_size() if claim else 0
        if limit and self._lane_mode() and not self._lane.take(runner):
            limit = 0  # the lane's holder claims these
        if not pending and not limit:
            return False
        if not pending and not jobqueue.has_due_jobs():
            # woken with nothing to write, and another runner took what was due: a
            # read-only look instead of a write transaction that claims nothing
            return False
        try:
            results, jobs = jobqueue.step(self.id, [o for _, o in pending], limit, self.lease_ms)
        except Exception:
            log.exception("worker %s: writing outcomes or claiming failed", self.id)
            for entry, _ in pending:  # their leases run out and the sweeper retries them
                self._release(entry)
            time.sleep(min(1.0, self.poll_interval))
            return False
        self._report(pending, results)
        if limit and len(jobs) == limit and self._lane.holder is not runner:
            self._notify_runners()  # more may be waiting: wake the next runner
        runner.drained = bool(limit) and 0 < len(jobs) < limit
        return self._accept(runner, jobs)

    def _write_pending(self, runner):
        pending = self._take_pending(runner)
        if not pending:
            return
        try:
            results, _ = jobqueue.step(self.id, [o for _, o in pending], 0, self.lease_ms)
        except Exception:
            log.exception("worker %s: writing %s outcome(s) failed", self.id, len(pending))
            for entry, _ in pending:
                self._release(entry)
            return
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

    def _flush_stuck(self, busy_seconds):
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

    def _run(self, entry):
        """Run the handler; ``(entry, outcome)`` to write, or None (the job was lost)."""
        job = entry.job
        started = time.monotonic()
        outcome = run_handler(self, entry)
        elapsed = time.monotonic() - started
        previous = self._durations.get(job.type)
        self._durations[job.type] = elapsed if previous is None else 0.8 * previous + 0.2 * elapsed
        if outcome is None or entry.lost:
            if entry.lost and outcome is not None:
                log.warning(
                    "job %s attempt %s: finished after its lease was lost; outcome dropped",
                    job.id,
                    job.attempts,
                )
            self._release(entry)
            return None
        if outcome[0] == "complete":
            payload = jobqueue.prepare_completion(job, self.id, None, encoded=outcome[1])
        else:
            payload = (job, *outcome[1])
        return (entry, (outcome[0], payload))

    def _report(self, pending, results):
        for (entry, (_kind, payload)), result in zip(pending, results, strict=True):
            self._release(entry)
            job = entry.job
            if result == "completed":
                self._count("completed")
            elif result is None:
                log.warning(
                    "job %s attempt %s: the lease was lost before its outcome was written",
                    job.id,
                    job.attempts,
                )
            else:
                self._count("failed" if result == "failed" else "retried")
                log.warning(
                    "job %s (%s) attempt %s: %s: %s -> %s",
                    job.id,
                    job.type,
                    job.attempts,
                    payload[1],
                    payload[2],
                    result,
                )

    # Heartbeat ------------------------------------------------------------------------

    def _heartbeat_main(self):
        with self.app.app_context():
            try:
                while not self._stop_heartbeat.wait(self.heartbeat_seconds):
                    try:
                        self._heartbeat_once()
                    except Exception:
                        log.exception("worker %s: heartbeat failed", self.id)
            finally:
                if not db.is_closed():
                    db.close()

    def _heartbeat_once(self):
        self._flush_stuck(BUSY_SECONDS)
        with self._lock:
            entries = [e for e in self._inflight.values() if not e.lost]
        if entries:
            held = jobqueue.renew_leases(self.id, [e.key for e in entries], self.lease_ms)
            for entry in entries:
                if entry.key not in held:
                    self._mark_lost(entry)
        running = self._periodic.running()
        if running:
            jobqueue.renew_periodic_locks(running, self.id, self._periodic.lock_ms())
        jobqueue.touch_worker(self.id, self._stopping.is_set())
        if is_postgres() and not db.is_closed():
            db.close()
