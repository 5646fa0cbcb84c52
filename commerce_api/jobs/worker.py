"""The job worker: one process, N runner threads, a heartbeat thread and a main loop.

- The runners (runners.RunnerPool) claim jobs, run them and write their outcomes.
- The main loop sweeps expired leases, starts due periodic tasks (periodic_runs), and
  wakes idle runners when new work is signalled (wakeup): PostgreSQL LISTEN/NOTIFY; on
  SQLite a change of ``PRAGMA data_version`` followed by a read-only probe; and every poll
  interval.
- The heartbeat thread renews the leases of the jobs held (and of running periodic tasks)
  every third of the lease. A job the renewal no longer finds was taken away: its runner
  is abandoned (its late outcome would be refused by the fence anyway) and replaced.
- The registry's background loops (``registry.background_loop``) run in threads of their
  own beside the runners.
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
from collections.abc import Callable
from typing import Any

from flask import Flask

from .. import checkpoint, loophealth
from ..db import db, is_postgres
from ..timeutil import now_ms
from . import queue as jobqueue
from . import registry
from .handle import WorkerHandle
from .periodic_runs import PeriodicRuns
from .runners import BUSY_SECONDS, RunnerPool
from .wakeup import WakeUp

log = logging.getLogger("commerce_api.worker")

EXIT_HUNG = 3  # the exit status of a worker that stopped because its runners hung
MAIN_LOOP = "main"  # the loops' names as the heartbeat reports them (loophealth)
RUNNERS = "runners"
HEARTBEAT = "heartbeat"
PERIODIC_CHECK_SECONDS = 1.0
PRUNE_WORKERS_SECONDS = 60.0


class Worker:
    def __init__(
        self,
        app: Flask,
        concurrency: int | None = None,
        poll_interval: float | None = None,
        once: bool = False,
        install_signals: bool = True,
        grace_seconds: float | None = None,
    ) -> None:
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
        self.stopping = threading.Event()  # set: claim nothing new, finish, exit

        self.runners = RunnerPool(self._handle())
        self._periodic = PeriodicRuns(self._handle())
        self._loops = []  # threads of the registry's background loops (not with ``once``)
        self._stop_heartbeat = threading.Event()
        self._signals = 0
        self._wakeup = WakeUp(self.id, self.poll_interval)
        self._previous_handlers = {}
        self._opened_connection = False
        self._heartbeat_thread = self._checkpointer = None
        cap = min(loophealth.BACKOFF_MAX_SECONDS, max(0.5, self.lease_seconds / 3))
        self._main_backoff = loophealth.Backoff(cap=cap)
        self._main_failed = False  # a step of the main loop's current pass failed

    def _handle(self) -> WorkerHandle:
        """What the runner pool and the periodic runs see of this worker."""
        return WorkerHandle(
            self.id,
            self.app,
            self.lease_seconds,
            self.lease_ms,
            self.poll_interval,
            self.max_abandoned,
            self.stopping,
            self.wake,
            self.exit_hung,
            self.guard,
        )

    @property
    def stats(self) -> dict[str, int]:
        """Jobs completed, failed, retried, lost and given back by this process."""
        return self.runners.stats

    # Public ---------------------------------------------------------------------------

    def run(self) -> int:
        """Run until stopped (or, with ``once``, until nothing is due); returns 0, or
        ``EXIT_HUNG`` when it stopped because too many runners hung (see ``exit_hung``)."""
        with self.app.app_context():
            try:
                self._start()
                self._main_loop()
                if self.once:
                    self._run_loops_once()
            finally:
                self._shutdown()
        return self.exit_code

    def stop(self) -> None:
        """Ask the worker to stop gracefully (what SIGTERM does)."""
        self.stopping.set()
        self.wake()
        self.runners.wake_all()

    def exit_hung(self, hung: int) -> None:
        """``hung`` runner threads are stuck past ``max_abandoned``: stop with EXIT_HUNG.

        A thread cannot be killed: past the limit the worker would run short of runners
        while still heartbeating. It exits instead, so the supervisor (or ``serve
        --with-worker``) starts a fresh process.
        """
        log.error(
            "worker %s: %s runner threads hung (limit %s); cannot keep concurrency %s,"
            " exiting with code %s",
            self.id,
            hung,
            self.max_abandoned,
            self.concurrency,
            EXIT_HUNG,
        )
        self.exit_code = EXIT_HUNG
        self.stop()

    def wake(self) -> None:
        """Cut the main loop's current sleep short."""
        self._wakeup.wake()

    def guard(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run a step of the main loop; a failure is logged, never fatal (None): a broken
        connection is dropped and the loop waits out a growing backoff (loophealth)."""
        try:
            return func(*args)
        except Exception as error:
            log.exception("worker %s: %s failed", self.id, getattr(func, "__name__", func))
            self._main_failed = True
            loophealth.after_failure(MAIN_LOOP, self._main_backoff, error, self.stopping)
            return None

    # Start and stop -------------------------------------------------------------------

    def _start(self):
        if self.install_signals and threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._previous_handlers[signum] = signal.signal(signum, self._on_signal)
        self._opened_connection = db.connect(reuse_if_open=True)
        loophealth.forget()
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
            self.runners.add_runner()
        if not self.once:
            for name, func in registry.BACKGROUND_LOOPS.items():
                thread = threading.Thread(
                    target=self._loop_main, args=(name, func), name=name, daemon=True
                )
                thread.start()
                self._loops.append(thread)
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
        # no lock here: a handler runs in the main thread, which may hold the runners' lock
        # (waking runners); the main loop sees the event, and its shutdown wakes the runners
        self.stopping.set()
        self.wake()

    def _shutdown(self):
        self.stop()
        self.guard(jobqueue.touch_worker, self.id, True)
        deadline = time.monotonic() + self.grace_seconds
        while time.monotonic() < deadline and (self.runners.held() or self._periodic.alive()):
            self._wakeup.wait(min(0.05, max(0.0, deadline - time.monotonic())))
        self.runners.flush_stuck(0)  # finished work is written, not given back
        self.runners.give_back_held()
        for thread in self._loops:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._periodic.release_interrupted()
        self._stop_heartbeat.set()
        self.guard(jobqueue.deregister_worker, self.id)
        checkpoint.stop(self._checkpointer)
        if self._opened_connection and not db.is_closed():
            db.close()
        for signum, handler in self._previous_handlers.items():
            signal.signal(signum, handler)
        self._wakeup.close()
        log.info("worker %s stopped: %s", self.id, self.stats)

    def _loop_main(self, name, func, stop=None):
        """Run background loop ``name`` until the worker stops: a loop that ends with an
        error is started again after a backoff, never left dead (``--once``: one run)."""
        stop = stop or self.stopping
        once = stop.is_set()
        backoff = loophealth.Backoff(cap=loophealth.BACKOFF_MAX_SECONDS)
        with self.app.app_context():
            try:
                while True:
                    try:
                        func(stop)
                    except Exception as error:
                        log.exception("worker %s: background loop %s failed", self.id, name)
                        if once or stop.is_set():
                            return
                        loophealth.after_failure(name, backoff, error, stop)
                        continue
                    return
            finally:
                if not once:
                    loophealth.forget(name)
                if not db.is_closed() and threading.current_thread() is not threading.main_thread():
                    db.close()

    def _run_loops_once(self):
        """``--once``: one pass of every background loop, after the queue is drained."""
        done = threading.Event()
        done.set()
        for name, func in registry.BACKGROUND_LOOPS.items():
            self._loop_main(name, func, stop=done)

    # The main loop --------------------------------------------------------------------

    def _main_loop(self):
        next_sweep = 0.0
        next_periodic = 0.0
        next_prune = time.monotonic() + PRUNE_WORKERS_SECONDS
        next_poll = time.monotonic() + self.poll_interval
        while not self.stopping.is_set():
            if self._main_failed:
                self._main_failed = False
            else:
                loophealth.passed(MAIN_LOOP)
                self._main_backoff.reset()
            now = time.monotonic()
            if now >= next_sweep:
                swept = self.guard(jobqueue.sweep_expired_leases)
                if swept and swept["retrying"]:
                    self.runners.notify()
                next_sweep = now + self.sweep_seconds * random.uniform(0.8, 1.2)
            if now >= next_prune:
                self.guard(jobqueue.prune_workers, 10 * self.lease_ms + 60_000)
                next_prune = now + PRUNE_WORKERS_SECONDS
            if self._periodic.tasks and now >= next_periodic:
                self._periodic.start_due()
                next_periodic = now + PERIODIC_CHECK_SECONDS
            if (
                self.once
                and self._all_idle()
                and not self.guard(jobqueue.has_due_jobs)
                and self._all_idle()  # still: nobody woke up meanwhile
            ):
                break
            if now >= next_poll:
                # due retries, and anything no signal announced (a read-only probe)
                if self.runners.any_idle() and self.guard(jobqueue.has_due_jobs):
                    self.runners.notify()
                next_poll = now + self.poll_interval
            timeout = min(next_sweep, next_poll) - time.monotonic()
            if self._periodic.tasks:
                timeout = min(timeout, next_periodic - time.monotonic())
            if self.once:
                timeout = min(timeout, 0.02)
            if self._wait_for_work(max(0.0, timeout)):
                self.runners.notify()

    def _all_idle(self):
        """(--once) Every runner waits for work and nothing is held or running."""
        if not self.runners.all_idle() or self._periodic.alive():
            return False
        return not self._periodic.any_due()

    def _wait_for_work(self, timeout):
        """Sleep up to ``timeout``; True when new work may have arrived meanwhile."""
        return self._wakeup.wait_for_work(
            timeout,
            self.stopping,
            self.runners.any_idle,
            lambda: self.guard(jobqueue.has_due_jobs),
        )

    # Heartbeat ------------------------------------------------------------------------

    def _heartbeat_main(self):
        backoff = loophealth.Backoff(cap=self.heartbeat_seconds)
        with self.app.app_context():
            try:
                while not self._stop_heartbeat.wait(self.heartbeat_seconds):
                    try:
                        self._heartbeat_once()
                    except Exception as error:
                        log.exception("worker %s: heartbeat failed", self.id)
                        self._report_stalled()  # in the log while nothing can be written
                        loophealth.after_failure(HEARTBEAT, backoff, error, self._stop_heartbeat)
                    else:
                        backoff.reset()
            finally:
                if not db.is_closed():
                    db.close()

    def _heartbeat_once(self):
        self.runners.flush_stuck(BUSY_SECONDS)
        renewed = self.runners.renew_leases()
        if renewed or (self.runners.all_idle() and not self.runners.failing):
            # running jobs whose leases hold, or runners waiting for work after steps that
            # worked: progress (an idle runner touches the database only when woken)
            loophealth.passed(RUNNERS)
        running = self._periodic.running()
        if running:
            jobqueue.renew_periodic_locks(running, self.id, self._periodic.lock_ms())
        loophealth.passed(HEARTBEAT)
        jobqueue.touch_worker(
            self.id,
            self.stopping.is_set(),
            loops=loophealth.snapshot(),
            registration=(socket.gethostname(), os.getpid(), self.concurrency),
        )
        self._report_stalled()
        if is_postgres() and not db.is_closed():
            db.close()

    def _report_stalled(self):
        stall_ms = int(float(self.app.config["WORKER_STALL_SECONDS"]) * 1000)
        stalled = loophealth.stalled(loophealth.snapshot(), now_ms(), stall_ms)
        if stalled:
            log.warning("worker %s: loops not making progress (seconds since their last"
                        " pass): %s", self.id, stalled)  # fmt: skip
