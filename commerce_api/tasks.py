"""Every domain's registration, called by ``create_app`` (which the API, the CLI and the
worker all go through): the one way a job type, a periodic task, a background loop or a
domain check comes to exist (pypi/warehouse's ``includeme``).

Each domain's ``tasks.register()`` registers what its decorators marked and the questions
it answers for a lower domain; a domain missing here registers nothing, and
``tests/test_registration.py`` fails. Deployments and tests add modules of marked job
types of their own with ``COMMERCE_EXTRA_TASK_MODULES`` (a comma list).
"""

from . import totals
from .analysis import tasks as analysis_tasks
from .console import tasks as console_tasks
from .files import tasks as files_tasks
from .inventory import tasks as inventory_tasks
from .jobs import registry
from .jobs import tasks as jobs_tasks
from .marketplaces import tasks as marketplaces_tasks
from .orders import tasks as orders_tasks
from .pricing import tasks as pricing_tasks
from .webhooks import tasks as webhooks_tasks

# Every domain with something to register, lowest first.
DOMAINS = (
    jobs_tasks,
    inventory_tasks,
    marketplaces_tasks,
    orders_tasks,
    pricing_tasks,
    analysis_tasks,
    webhooks_tasks,
    console_tasks,
    files_tasks,
)

LIST_COUNT_COMPACT_SECONDS = 10


def list_count_compact():
    """Fold PostgreSQL's list-count deltas into the counts (``totals.compact``)."""
    return totals.compact()


def register_all(config):
    """Register every domain, then the ``EXTRA_TASK_MODULES``; idempotent."""
    for domain in DOMAINS:
        domain.register()
    extra = [name.strip() for name in str(config.get("EXTRA_TASK_MODULES") or "").split(",")]
    registry.load_modules(name for name in extra if name)
    if str(config.get("DATABASE_URL") or "").startswith("postgres"):
        # only PostgreSQL keeps count deltas to fold (SQLite's triggers update the counts)
        registry.add_periodic("list_count_compact", LIST_COUNT_COMPACT_SECONDS, list_count_compact)
