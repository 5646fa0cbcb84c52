"""Real processes for concurrency, crash and rate-limit tests: gunicorn and workers on 127.0.0.1.

Every process is started in its own process group, polled with time-outs, and killed on exit.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_cli(args, env, cwd=ROOT, program=("-m", "commerce_api.cli"), timeout=60):
    """``commerce-api <args>`` (or ``python <program> <args>``) in a process of its own,
    its output captured."""
    return subprocess.run(
        [sys.executable, *program, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def process_env(database_url, **config):
    """Environment for a child process: the test database and COMMERCE_* settings."""
    env = dict(os.environ)
    env["COMMERCE_DATABASE_URL"] = database_url
    env["COMMERCE_RATE_LIMIT_ENABLED"] = "0"  # as in the test config: on where a test asks
    for key, value in config.items():
        env[f"COMMERCE_{key}"] = str(value)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def stop_process(proc, timeout=10):
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)


def wait_healthy(base: str, proc: subprocess.Popen, timeout: float = 30) -> None:
    """Wait until ``base`` answers ``GET /api/health`` with 200; fails if ``proc`` exits or
    ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            if requests.get(base + "/api/health", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not start in time")
        time.sleep(0.1)


@contextlib.contextmanager
def gunicorn_server(
    database_url, workers=2, startup_timeout=30, threads=1, processes=None, **config
):
    """Run ``gunicorn wsgi:app`` on a free 127.0.0.1 port; yields the base URL.

    ``threads`` > 1 runs gthread workers with that many threads each (what ``commerce-api
    serve`` runs); 1 runs sync workers. ``processes`` (a list) receives the master's Popen,
    for a test that kills it (its process group holds the workers)."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "gunicorn",
        "--workers",
        str(workers),
        "--bind",
        f"127.0.0.1:{port}",
        "--worker-class",
        "gthread" if threads > 1 else "sync",
        "--threads",
        str(threads),
        "--timeout",
        "60",
        "--log-level",
        "warning",
        "wsgi:app",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=process_env(database_url, **config), start_new_session=True
    )
    if processes is not None:
        processes.append(proc)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, startup_timeout)
        yield base
    finally:
        stop_process(proc)


def run_worker_once(database_url, timeout=60, **config):
    """Run ``commerce-api worker --once`` to its end; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "commerce_api.cli", "worker", "--once"],
        cwd=ROOT,
        env=process_env(database_url, LOG_LEVEL="WARNING", **config),
        timeout=timeout,
        capture_output=True,
        text=True,
    )


def start_command(args, database_url, **config):
    """Start ``commerce-api <args>`` in its own process group; the caller stops it."""
    return subprocess.Popen(
        [sys.executable, "-m", "commerce_api.cli", *args],
        cwd=ROOT,
        env=process_env(database_url, **config),
        start_new_session=True,
    )


class LocalHTTPServer:
    """A threaded HTTP server on a free 127.0.0.1 port for a test's fake peer (a marketplace
    adapter, an LLM provider, a review source). Subclasses call ``self.serve(Handler)``;
    ``with`` (or ``start``/``close``) runs and stops it."""

    def serve(self, handler):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
