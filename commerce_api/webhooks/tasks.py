"""Background work of webhooks: the delivery loop of every worker, and outbox retention."""

import threading

from ..config import current_config
from ..jobs.registry import background_loop, periodic, register_marked
from . import retention
from .service import run_loop

PURGE_INTERVAL_SECONDS = 3600


@background_loop("webhook_delivery")
def webhook_delivery(stop: threading.Event) -> None:
    """Fan outbox events out to endpoints and send due deliveries until ``stop``."""
    run_loop(current_config(), stop)


@periodic("webhook_retention", PURGE_INTERVAL_SECONDS)
def webhook_retention() -> dict[str, int]:
    """Delete finished deliveries and delivered events older than the retention age."""
    return retention.purge(float(current_config()["WEBHOOK_RETENTION_DAYS"]))


def register() -> None:
    """Register this domain's background work and checks (``commerce_api.tasks``)."""
    register_marked(__name__)
