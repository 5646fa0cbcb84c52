"""Run gunicorn with the project's settings, and the job worker beside it on request."""

import os
import signal
import subprocess
import sys

from gunicorn.app.base import BaseApplication

from . import create_app
from .http import limits


class GunicornApp(BaseApplication):
    def __init__(self, options):
        self.options = options
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return create_app()


def gunicorn_options(bind, workers):
    return {
        "bind": bind,
        "workers": workers,
        # sync workers gave a steadier tail latency than gthread in our measurements
        "worker_class": "sync",
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


def serve(bind="127.0.0.1:8000", workers=2, with_worker=False):
    worker = None
    if with_worker:
        # Its own session: Ctrl-C reaches gunicorn only, and the SIGTERM below is then the
        # worker's one and only (graceful) signal; a second signal would make it exit at once.
        worker = subprocess.Popen(
            [sys.executable, "-m", "commerce_api.cli", "worker"], start_new_session=True
        )
    try:
        GunicornApp(gunicorn_options(bind, workers)).run()
    finally:
        if worker is not None and worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=35)
            except subprocess.TimeoutExpired:
                worker.kill()
