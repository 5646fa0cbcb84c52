"""A PostgreSQL restart under a two-process server: 503 with Retry-After, never 500; the
pool reconnects by itself; a key used during the outage can be retried at once."""

import json
import subprocess
import sys
import threading
import time

import pytest
import requests

from tests.support.factories import product_body
from tests.support.pgcluster import postgres_bin, private_cluster
from tests.support.servers import ROOT, gunicorn_server, process_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.engine_free,  # a cluster of its own: the SQLite pass runs it
    pytest.mark.skipif(postgres_bin() is None, reason="PostgreSQL is not installed"),
]


def cli(url, *args):
    done = subprocess.run(
        [sys.executable, "-m", "commerce_api.cli", *args],
        cwd=ROOT,
        env=process_env(url),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def provision(url):
    """Schema, a tenant and a key, through the CLI as an operator would."""
    cli(url, "init-db")
    tenant = json.loads(cli(url, "tenants", "create", "--name", "Outage", "--json"))
    key = json.loads(
        cli(
            url,
            "keys",
            "create",
            "--tenant",
            tenant["id"],
            "--name",
            "k",
            *("--scopes", "all", "--json"),
        )
    )
    return {"Authorization": f"Bearer {key['key']}", "X-Tenant-ID": tenant["id"]}


class Traffic:
    """Requests of every kind from two threads, all the time, each outcome recorded."""

    def __init__(self, base, headers):
        self.base = base
        self.headers = headers
        self.outcomes = []  # (monotonic time, method, status, code, retry_after)
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(n,)) for n in range(2)]

    def _one(self, n, i):
        if i % 2:
            response = requests.get(self.base + "/api/products", headers=self.headers, timeout=10)
        else:
            response = requests.post(
                self.base + "/api/products",
                json=product_body(sku=f"T{n}-{i}"),
                headers={**self.headers, "Idempotency-Key": f"traffic-{n}-{i}"},
                timeout=10,
            )
        code = response.json()["error"]["code"] if response.status_code >= 400 else None
        return response.request.method, response.status_code, code, response.headers

    def _run(self, n):
        i = 0
        while not self.stop.is_set():
            i += 1
            method, status, code, headers = self._one(n, i)
            retry_after = headers.get("Retry-After")
            self.outcomes.append((time.monotonic(), method, status, code, retry_after))
            time.sleep(0.02)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)


def test_postgres_restart_answers_503_and_recovers(tmp_path):
    with private_cluster() as cluster:
        url = cluster.create_database("outage")
        headers = provision(url)
        with gunicorn_server(url, workers=2, threads=2) as base:
            assert requests.get(base + "/api/products", headers=headers, timeout=10).ok
            with Traffic(base, headers) as traffic:
                time.sleep(0.5)
                stopped_at = time.monotonic()
                cluster.stop()
                time.sleep(1.0)
                # during the outage: a POST with a key of its own, then liveness and readiness
                during = requests.post(
                    base + "/api/products",
                    json=product_body(sku="DURING"),
                    headers={**headers, "Idempotency-Key": "during-outage"},
                    timeout=10,
                )
                live = requests.get(base + "/api/health", timeout=10)
                ready = requests.get(base + "/api/health/ready", timeout=10)
                cluster.start()
                back_at = time.monotonic()
                # the first request after the restart to succeed, within 2 s
                retried = None
                while time.monotonic() < back_at + 5:
                    retried = requests.post(
                        base + "/api/products",
                        json=product_body(sku="DURING"),
                        headers={**headers, "Idempotency-Key": "during-outage"},
                        timeout=10,
                    )
                    if retried.status_code != 503:
                        break
                    time.sleep(0.05)
                recovered_at = time.monotonic()
                time.sleep(1.0)  # and traffic keeps succeeding afterwards
            statuses_after = [o[2] for o in traffic.outcomes if o[0] > recovered_at + 0.5]

    assert during.status_code == 503, during.text
    assert during.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert during.headers["Retry-After"] == "1"
    assert live.status_code == 200
    assert ready.status_code == 503
    assert ready.json()["checks"]["database"]["status"] == "unavailable"
    # the key used during the outage is not held: the retry runs (not 409 IN_USE)
    assert retried.status_code == 201, retried.text
    assert recovered_at - back_at < 2.0, recovered_at - back_at
    outage = [o for o in traffic.outcomes if stopped_at <= o[0] <= back_at]
    assert outage, "no request ran during the outage"
    assert all(o[2] == 503 and o[3] == "SERVICE_UNAVAILABLE" for o in outage if o[2] >= 500), outage
    assert all(o[4] == "1" for o in outage if o[2] == 503)
    assert not [o for o in traffic.outcomes if o[2] >= 500 and o[2] != 503]
    assert statuses_after and set(statuses_after) <= {200, 201}, statuses_after
