"""The periodic tasks this worker process runs: one worker of the fleet takes a due task
(a lock row in ``periodic_task``), runs it in a thread of its own and releases it."""

import logging
import threading
import time
import traceback
from collections.abc import Callable

from .. import loophealth
from ..db import db
from . import queue as jobqueue
from . import registry
from .handle import WorkerHandle

log = logging.getLogger("commerce_api.jobs")


class PeriodicRuns:
    """The periodic tasks of one worker: it reads the worker's ``id``, ``app`` and
    ``lease_ms`` from its handle, runs its database steps through ``worker.guard`` and
    calls ``worker.wake()`` when a run ends."""

    def __init__(self, worker: WorkerHandle) -> None:
        self.worker = worker
        self.tasks: dict[str, tuple[float, Callable]] = {}  # name -> (interval, func), at start
        self._threads = {}  # task name -> thread, for runs of this process

    def load(self) -> None:
        """Read the registry and make sure every task has its row."""
        self.tasks = dict(registry.PERIODIC_TASKS)
        if self.tasks:
            jobqueue.ensure_periodic_rows(self.tasks)

    def lock_ms(self) -> int:
        return max(self.worker.lease_ms, 1000)

    def alive(self) -> bool:
        return any(thread.is_alive() for thread in self._threads.values())

    def running(self) -> list[str]:
        """Names of the tasks this process is running now."""
        return [name for name, thread in self._threads.items() if thread.is_alive()]

    def any_due(self) -> bool:
        return bool(self.tasks and jobqueue.due_periodic_tasks(list(self.tasks)))

    def start_due(self) -> None:
        """Start each due task this process can take (claimed through its lock row)."""
        guard = self.worker.guard
        names = [
            name
            for name in self.tasks
            if name not in self._threads or not self._threads[name].is_alive()
        ]
        due = guard(jobqueue.due_periodic_tasks, names) or []
        for name in due:
            if not guard(jobqueue.claim_periodic, name, self.worker.id, self.lock_ms()):
                continue
            thread = threading.Thread(
                target=self._main, args=(name,), name=f"periodic-{name}", daemon=True
            )
            self._threads[name] = thread
            thread.start()

    def release_interrupted(self) -> None:
        """At shutdown: release the locks of the runs still going (they run again)."""
        for name in self.running():
            self.worker.guard(
                jobqueue.finish_periodic,
                name,
                self.worker.id,
                "interrupted by worker shutdown",
                None,
                True,
            )

    def _main(self, name):
        _interval, func = self.tasks[name]
        error = None
        with self.worker.app.app_context():
            try:
                started = time.monotonic()
                func()
                log.info("periodic %s done in %.2fs", name, time.monotonic() - started)
            except Exception as exc:
                error = traceback.format_exc()
                log.error("periodic %s failed:\n%s", name, error)
                loophealth.drop_connection(exc)  # a lost database: release on a new one
            finally:
                try:
                    jobqueue.finish_periodic(name, self.worker.id, error)
                except Exception as exc:
                    # its lock runs out and the task is due again (on any worker)
                    log.exception("periodic %s: could not release its lock", name)
                    loophealth.drop_connection(exc)
                if not db.is_closed():
                    db.close()
        self.worker.wake()
