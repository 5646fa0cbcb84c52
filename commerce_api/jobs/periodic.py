"""Periodic tasks the worker fleet runs (for example pulling orders from marketplaces).

A module registers a task with ``@periodic("name", interval_seconds)``; the worker imports
the modules in ``PERIODIC_MODULES`` at start and runs each task when it is due.
"""

PERIODIC_MODULES = ("commerce_api.marketplaces.tasks",)

TASKS = {}  # name -> (interval_seconds, func)


def periodic(name, interval_seconds):
    """Register ``func()`` to run about every ``interval_seconds`` across the whole fleet."""

    def decorator(func):
        TASKS[name] = (interval_seconds, func)
        return func

    return decorator
