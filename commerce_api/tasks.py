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
    "commerce_api.console.tasks",
    "commerce_api.files.tasks",
)

LIST_COUNT_COMPACT_SECONDS = 10


def list_count_compact():
    """Fold PostgreSQL's list-count deltas into the counts (``totals.compact``)."""
    return totals.compact()


def load_task_modules(config):
    """Import every task module: the built-in ones, then ``EXTRA_TASK_MODULES``."""
    extra = [name.strip() for name in str(config.get("EXTRA_TASK_MODULES") or "").split(",")]
    registry.load_modules([*TASK_MODULES, *(name for name in extra if name)])
    if str(config.get("DATABASE_URL") or "").startswith("postgres"):
        # only PostgreSQL keeps count deltas to fold (SQLite's triggers update the counts)
        registry.periodic("list_count_compact", LIST_COUNT_COMPACT_SECONDS)(list_count_compact)
