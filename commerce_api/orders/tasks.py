"""Order background work: the ``order_cancellation`` and ``order_pull`` jobs, the
periodic task that queues one ``order_pull`` per active connection, and the loop that pulls
the orders marketplace notifications name (``order_notified_pull``)."""

import os
import socket
import threading
from typing import Any

from ..config import current_config, load_config
from ..errors import ApiError
from ..jobs.errors import JobFailed
from ..jobs.models import Job
from ..jobs.registry import background_loop, job_type, periodic, register_marked
from ..jobs.runtime import JobContext
from ..products.services import register_open_order_check
from .cancellation import push_cancellation
from .notified import LOOP_NAME as NOTIFIED_LOOP
from .notified import NotifiedPullLoop
from .pulls import enqueue_pulls, pull_one
from .queries import sku_has_open_orders

# Read when the worker imports this module: COMMERCE_ORDER_PULL_INTERVAL_SECONDS.
ORDER_PULL_INTERVAL_SECONDS = int(load_config()["ORDER_PULL_INTERVAL_SECONDS"])


@job_type("order_cancellation", scope="orders:read", internal=True, typical_seconds=5, timeout=60)
def order_cancellation(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Push a cancellation request to the marketplace.

    Queued by ``POST /api/orders/:id/cancel`` only. The marketplace's answer is applied at
    once: approved cancels the order and releases its stock, rejected records the refusal,
    pending waits for a later order pull to bring the decision. An unreachable marketplace
    fails the attempt as retryable; when the retries run out the job fails, the request
    stays ``requested`` and may be asked again.
    """
    order_id = (job.params or {}).get("order_id")
    if not isinstance(order_id, str) or not order_id:
        raise JobFailed("VALIDATION_ERROR", "The job has no order_id.")
    try:
        return push_cancellation(job.tenant_id, order_id, job.id, created_by=f"job:{job.id}")
    except ApiError as error:
        raise JobFailed(
            error.code,
            error.message,
            # a shipment holding the order: ask again once it is done
            retryable=error.code in ("MARKETPLACE_UNAVAILABLE", "CONCURRENT_UPDATE"),
            details=error.details,
        ) from None


@job_type("order_pull", scope="orders:read", internal=True, typical_seconds=5, timeout=300)
def order_pull(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Pull new and changed orders (and marketplace stock) from one connection.

    Queued by the periodic ``pull_orders``, one per active connection. An unreachable
    marketplace is recorded on the connection (``last_pull_status``) and the job completes:
    the next period pulls again from the same cursor.
    """
    connection_id = (job.params or {}).get("connection_id")
    if not isinstance(connection_id, str) or not connection_id:
        raise JobFailed("VALIDATION_ERROR", "The job has no connection_id.")
    summary = pull_one(job.tenant_id, connection_id, heartbeat=ctx.heartbeat)
    if summary is None:
        return {"connection_id": connection_id, "status": "skipped", "reason": "not active"}
    return summary


@periodic("pull_orders", ORDER_PULL_INTERVAL_SECONDS)
def pull_orders() -> list[dict[str, str]]:
    """Queue an ``order_pull`` job for every active connection (none twice)."""
    return enqueue_pulls()


@background_loop(NOTIFIED_LOOP)
def order_notified_pull(stop: threading.Event) -> None:
    """Pull the orders marketplace notifications named, at once, until ``stop``."""
    worker = f"{socket.gethostname()}:{os.getpid()}"
    NotifiedPullLoop(current_config(), worker).run(stop)


def register() -> None:
    """Register this domain's background work and checks (``commerce_api.tasks``)."""
    register_marked(__name__)
    # archiving a product asks whether open orders hold its SKU (orders is above products)
    register_open_order_check(sku_has_open_orders)
