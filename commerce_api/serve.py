"""Run gunicorn with the project's settings, and the job worker beside it on request."""

import os
import signal
import subprocess
import sys
import threading

from gunicorn.app.base import BaseApplication

from . import create_app
from .http import limits

RESTART_DELAY_SECONDS = 1.0  # between a worker's exit and its replacement


class GunicornApp(BaseApplication):
    def __init__(self, options):
        self.options = options
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return create_app()


def gunicorn_options(bind, workers, threads=4):
    return {
        "bind": bind,
        "workers": workers,
        # gthread: a request waiting on a slow marketplace holds one thread, not a whole
        # process (docs/decisions.md, "Slow marketplaces"); threads=1 is the sync model
        "worker_class": "gthread" if threads > 1 else "sync",
        "threads": threads,
        "keepalive": 5,
        "timeout": 60,
        "graceful_timeout": 30,
        "accesslog": os.environ.get("COMMERCE_ACCESS_LOG") or None,
        "errorlog": "-",
        "loglevel": "warning",
        # above the app's own limits, so that the app answers 414 / 431 in the JSON envelope
        "limit_request_line": limits.GUNICORN_LIMIT_REQUEST_LINE,
        "limit_request_fields": limits.GUNICORN_LIMIT_REQUEST_FIELDS,
        "limit_request_field_size": limits.GUNICORN_LIMIT_REQUEST_FIELD_SIZE,
    }


class WorkerSupervisor:
    """Keeps one ``commerce-api worker`` process running beside gunicorn: a worker that
    exits (a crash, or too many hung runners) is started again after a short pause."""

    def __init__(self):
        self.process = None
        self.restarts = 0
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="worker-supervisor", daemon=True)

    def start(self):
        self._spawn()
        self._thread.start()

    def _spawn(self):
        with self._lock:
            if self._stopping.is_set():
                return
            # Its own session: Ctrl-C reaches gunicorn only, and the SIGTERM of stop() is
            # then the worker's one (graceful) signal; a second would make it exit at once.
            self.process = subprocess.Popen(
                [sys.executable, "-m", "commerce_api.cli", "worker"], start_new_session=True
            )

    def _watch(self):
        while not self._stopping.wait(0.2):
            code = self.process.poll()
            if code is None:
                continue
            print(
                f"serve: the job worker (pid {self.process.pid}) exited with code {code};"
                " starting another",
                file=sys.stderr,
                flush=True,
            )
            if self._stopping.wait(RESTART_DELAY_SECONDS):
                return
            self.restarts += 1
            self._spawn()

    def stop(self):
        self._stopping.set()
        with self._lock:
            process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=35)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def serve(bind="127.0.0.1:8000", workers=2, with_worker=False, threads=4):
    supervisor = WorkerSupervisor() if with_worker else None
    if supervisor is not None:
        supervisor.start()
    try:
        GunicornApp(gunicorn_options(bind, workers, threads)).run()
    finally:
        if supervisor is not None:
            supervisor.stop()
