"""An import job whose worker is SIGKILLed halfway: the next worker takes the job again,
the chunks already applied read as unchanged, and nothing is applied twice or lost."""

import io
import os
import signal

import pytest

from commerce_api.events.models import Event
from commerce_api.jobs.models import Job
from commerce_api.products.models import Product
from tests.support.servers import start_command, stop_process
from tests.support.waiting import wait_for

ROWS = 20_000  # 100 chunks: seconds of work, long enough to kill the worker inside it
WORKER = {"WORKER_LEASE_SECONDS": 1, "WORKER_RETRY_BACKOFF_SECONDS": 0, "LOG_LEVEL": "WARNING"}


def products_file(rows):
    lines = ["sku,title,status,cost_price"]
    lines += [f"CRASH-{n:05d},Mug {n},active,{1 + n % 90}.50" for n in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def job_of(app, job_id):
    with app.app_context():
        return Job.get_by_id(job_id)


@pytest.mark.slow
def test_a_worker_killed_mid_import_leaves_whole_chunks_and_the_retry_finishes(
    app, client, headers, tenant, database_url
):
    answer = client.post(
        "/api/imports",
        headers=headers,
        data={"type": "products", "file": (io.BytesIO(products_file(ROWS)), "p.csv")},
        content_type="multipart/form-data",
    )
    assert answer.status_code == 202, answer.get_json()
    job_id = answer.get_json()["data"]["job_id"]
    first = start_command(["worker", "--concurrency", "1"], database_url, **WORKER)
    try:
        assert wait_for(lambda: (job_of(app, job_id).progress or {}).get("done", 0) > 0, 60)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        stop_process(first)
    with app.app_context():
        applied = Product.select().where(Product.tenant == tenant.id).count()
    assert 0 < applied < ROWS and applied % 200 == 0  # whole chunks only
    second = start_command(["worker", "--concurrency", "1"], database_url, **WORKER)
    try:
        assert wait_for(lambda: job_of(app, job_id).status == "completed", 120)
    finally:
        stop_process(second)
    result = job_of(app, job_id).result
    assert result["failed"] == 0 and result["rows"] == ROWS
    assert result["created"] + result["unchanged"] == ROWS  # the first worker's chunks stand
    assert result["unchanged"] >= applied
    with app.app_context():
        assert Product.select().where(Product.tenant == tenant.id).count() == ROWS
        created = Event.select().where(
            (Event.tenant_id == tenant.id) & (Event.type == "product.created")
        )
        assert created.count() == ROWS  # one event per product, none twice
