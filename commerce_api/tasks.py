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
from .products import bundles as product_bundles
from .products import services as product_services
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


# What a domain's ``register()`` hands a lower domain, and where that keeps it: the
# worker's self-check finds each there (a hook has no decorator to mark it).
HOOKS = (
    (jobs_tasks, "live_jobs_term", totals.registered_extras),
    (inventory_tasks, "check_components", product_bundles.registered_hooks),
    (inventory_tasks, "drop_own_record", product_bundles.registered_hooks),
    (marketplaces_tasks, "fulfilling_marketplaces", product_services.registered_checks),
    (orders_tasks, "sku_has_open_orders", product_services.registered_checks),
)


def _marked_missing(domain) -> list[str]:
    """What ``domain``'s decorators marked that the registry does not hold."""
    missing = []
    for func in registry.marked(domain):
        for add, args in func.registrations:
            if add is registry.register:
                if registry.get(args[0].name) != args[0]:
                    missing.append(f"job type {args[0].name}")
            elif add is registry.add_periodic:
                if registry.PERIODIC_TASKS.get(args[0]) != tuple(args[1:]):
                    missing.append(f"periodic task {args[0]}")
            elif registry.BACKGROUND_LOOPS.get(args[0]) is not args[1]:
                missing.append(f"background loop {args[0]}")
    return missing


def self_check() -> list[str]:
    """What registration left out, one line each (empty: all there): every job type,
    periodic task and loop a domain of ``DOMAINS`` marked, every hook of ``HOOKS``, and a
    handler for every job type ``POST /api/ai-jobs`` accepts. ``commerce-api worker``
    refuses to start unless it is empty."""
    problems = []
    for domain in DOMAINS:
        missing = _marked_missing(domain)
        missing += [
            f"check {name}"
            for module, name, registered in HOOKS
            if module is domain and getattr(module, name) not in registered()
        ]
        if missing:
            problems.append(f"{domain.__name__}.register() did not register: {', '.join(missing)}")
    for name in registry.public_types():
        spec = registry.get(name)
        if spec is not None and spec.run is None:
            problems.append(f"job type {name} is accepted by the API but has no handler")
    return problems
