"""Run gunicorn with the project's settings, and the job worker beside it on request."""

import glob
import os
import signal
import subprocess
import sys
import tempfile
import threading

from gunicorn.app.base import BaseApplication

from . import create_app
from .config import load_config
from .health import metrics
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


# gunicorn's access log: the request id of each response beside the usual fields
ACCESS_LOG_FORMAT = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms rid=%({x-request-id}o)s "%(a)s"'


def access_log_target(config):
    """Where gunicorn writes its access log: stderr by default, a file when
    ``COMMERCE_ACCESS_LOG`` names one, none when it is ``off`` or the app writes JSON
    access lines itself (``COMMERCE_LOG_FORMAT=json``)."""
    target = os.environ.get("COMMERCE_ACCESS_LOG") or "-"
    if target.lower() in ("off", "none", "0") or str(config["LOG_FORMAT"]).lower() == "json":
        return None
    return target


def prepare_metrics_folder(config):
    """Multi-process metrics: every gunicorn process writes its counters to files in one
    folder, which a scrape adds up. A folder of our own unless the operator named one;
    emptied at start (files of a previous run would count twice)."""
    if not config["METRICS_ENABLED"]:
        return None
    folder = os.environ.get(metrics.MULTIPROC_ENV)
    if not folder:
        folder = tempfile.mkdtemp(prefix="commerce-metrics-")
        os.environ[metrics.MULTIPROC_ENV] = folder
    os.makedirs(folder, exist_ok=True)
    for path in glob.glob(os.path.join(folder, "*.db")):
        os.unlink(path)
    return folder


def gunicorn_options(bind, workers, threads=4, config=None):
    config = config or load_config()
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
        "accesslog": access_log_target(config),
        "access_log_format": ACCESS_LOG_FORMAT,
        "errorlog": "-",
        "child_exit": metrics.gunicorn_child_exit,
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
    config = load_config()
    prepare_metrics_folder(config)
    supervisor = WorkerSupervisor() if with_worker else None
    if supervisor is not None:
        supervisor.start()
    try:
        GunicornApp(gunicorn_options(bind, workers, threads, config)).run()
    finally:
        if supervisor is not None:
            supervisor.stop()
