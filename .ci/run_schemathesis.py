"""Check the OpenAPI document against the running service with schemathesis.

Starts ``commerce-api serve`` (gunicorn, with the limits of ``commerce_api/serve.py``) on a
free 127.0.0.1 port over a throwaway SQLite database with one seeded tenant and an
all-scopes key, runs a bounded ``schemathesis run --checks all`` with a fixed seed over
every operation, stops the server and exits with schemathesis's status.

    .venv/bin/python .ci/run_schemathesis.py [extra schemathesis options]

Exclusions and their reasons: docs/decisions.md, "OpenAPI document and schemathesis".
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
SEED = "20261123"
MAX_EXAMPLES = "5"
CONFIG = os.path.join(ROOT, ".ci", "schemathesis.toml")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli(env, *args):
    out = subprocess.run(
        [os.path.join(BIN, "commerce-api"), *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout) if "--json" in args else out.stdout


def wait_healthy(base, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(base + "/api/health", timeout=1) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.2)
    raise SystemExit("the server did not answer /api/health in time")


def stop(proc):
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def main(extra):
    with tempfile.TemporaryDirectory(prefix="commerce-schemathesis-") as tmp:
        env = dict(os.environ)
        env.pop("COMMERCE_DATABASE_URL", None)
        env["COMMERCE_DATABASE_URL"] = "sqlite:///" + os.path.join(tmp, "api.db")
        # the run sends thousands of requests with one key: limits would only answer 429
        env["COMMERCE_RATE_LIMIT_ENABLED"] = "0"
        env["COMMERCE_ACCESS_LOG"] = ""
        cli(env, "init-db")
        tenant = cli(env, "tenants", "create", "--name", "schemathesis", "--json")
        key = cli(env, "keys", "create", "--tenant", tenant["id"], "--name", "schemathesis",
                  "--scopes", "all", "--json")  # fmt: skip
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                os.path.join(BIN, "commerce-api"),
                "serve",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
            ],  # fmt: skip
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        try:
            wait_healthy(base, server)
            command = [
                os.path.join(BIN, "schemathesis"),
                "--config-file",
                CONFIG,
                "run",
                f"{base}/api/openapi.json",
                "--url",
                base,
                "--checks",
                "all",
                "--seed",
                SEED,
                "--max-examples",
                MAX_EXAMPLES,
                "--max-response-time",
                "5",
                "--workers",
                "1",
                "--no-color",
                "--header",
                f"Authorization: Bearer {key['key']}",
                "--header",
                f"X-Tenant-ID: {tenant['id']}",
                *extra,
            ]
            hooks_env = {
                **env,
                "PYTHONPATH": os.path.join(ROOT, ".ci"),
                "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
            }
            return subprocess.run(command, cwd=tmp, env=hooks_env).returncode
        finally:
            stop(server)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
