"""CPU cost of the request metrics: ``.venv/bin/python bench/metrics_overhead.py``.

One product GET through Flask's test client (no network, no gunicorn), with metrics off
and on (multi-process storage, as under ``serve``), taking turns over rounds; prints the
median and the minimum time per request of each. The minimum is the figure to compare on
a busy machine: other load only ever adds time.
"""

import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

FOLDER = tempfile.mkdtemp(prefix="commerce-bench-metrics-")
os.environ["PROMETHEUS_MULTIPROC_DIR"] = FOLDER  # before prometheus_client is imported

from commerce_api import create_app  # noqa: E402
from commerce_api.auth.services import create_key, create_tenant  # noqa: E402
from commerce_api.db import db  # noqa: E402
from commerce_api.migrations import upgrade  # noqa: E402

ROUNDS, REQUESTS = 15, 2000


def main():
    config = {
        "DATABASE_URL": f"sqlite:///{FOLDER}/bench.db",
        "RATE_LIMIT_ENABLED": False,
        "LOG_LEVEL": "WARNING",
    }
    apps = {"off": create_app(config), "on": create_app({**config, "METRICS_ENABLED": True})}
    with db.connection_context():
        upgrade(db.obj)
        tenant = create_tenant("Bench", "enterprise")
        _, secret = create_key(tenant.id, "bench", ["all"])
    headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant.id}
    created = (
        apps["on"]
        .test_client()
        .post("/api/products", json={"sku": "MUG-1", "title": "Mug"}, headers=headers)
    )
    assert created.status_code == 201, created.get_json()
    times = {mode: [] for mode in apps}
    for _ in range(ROUNDS):
        for mode, app in apps.items():
            db.initialize(app.extensions["commerce"]["database"])
            client = app.test_client()
            started = time.perf_counter()
            for _ in range(REQUESTS):
                assert client.get("/api/products/MUG-1", headers=headers).status_code == 200
            times[mode].append((time.perf_counter() - started) / REQUESTS * 1e6)
    for mode, values in times.items():
        print(
            f"metrics {mode:3}  median {statistics.median(values):7.1f} us/request"
            f"  min {min(values):7.1f} us/request"
        )
    print(f"added by metrics (min): {min(times['on']) - min(times['off']):+.1f} us/request")


if __name__ == "__main__":
    main()
