"""Which modules register job types and periodic tasks (``jobs.registry``).

The top of the package names them, so that ``jobs`` knows no domain. Deployments and tests
add modules of their own with ``COMMERCE_EXTRA_TASK_MODULES`` (a comma list).
"""

from . import totals
from .jobs import registry

TASK_MODULES = (
    "commerce_api.marketplaces.tasks",
    "commerce_api.orders.tasks",
    "commerce_api.pricing.tasks",
    "commerce_api.analysis.tasks",
    "commerce_api.webhooks.tasks",
)


def load_task_modules(config):
    """Import every task module: the built-in ones, then ``EXTRA_TASK_MODULES``."""
    extra = [name.strip() for name in str(config.get("EXTRA_TASK_MODULES") or "").split(",")]
    registry.load_modules([*TASK_MODULES, *(name for name in extra if name)])


@registry.periodic("list_count_compact", 10)
def list_count_compact():
    """Fold PostgreSQL's list-count deltas into the counts (a no-op on SQLite)."""
    return totals.compact()
