"""The one list of job types and periodic tasks.

Each domain registers its background work from its own ``tasks.py``::

    @job_type("order_cancellation", scope="orders:read", internal=True, timeout=60)
    def order_cancellation(job, ctx):
        ...

A handler ``run(job, ctx) -> dict`` does the work and returns the JSON-able result; it
raises ``commerce_api.jobs.errors.JobFailed`` to fail (``retryable=True`` to be tried
again); any other exception is logged and counts as a retryable ``INTERNAL_ERROR`` attempt.
``ctx`` gives ``ctx.heartbeat()`` (renews the lease at once; raises ``JobLost`` when the
worker no longer holds the job), ``ctx.progress(done, total)``, ``ctx.worker_id``,
``ctx.attempt``, ``ctx.lost``, ``ctx.config`` and ``ctx.log``. Handlers run in a worker
thread with an app context and their own database connection.

``@periodic(name, seconds)`` registers a task one worker of the fleet runs when due;
``@background_loop(name)`` a loop every worker process runs beside its job runners
(webhook delivery, for example).

A public type that is not built yet is registered with ``declare_job_type`` (its params
are still checked at dispatch) and fails with ``JOB_TYPE_NOT_IMPLEMENTED`` when it runs.

The registry knows no domain: the top of the package (``commerce_api.tasks``) names the
modules to import, plus the ``EXTRA_TASK_MODULES`` setting (the tests' own job types).
"""

import functools
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..shapes import compile_shape

DEFAULT_TYPICAL_SECONDS = 60


@dataclass(frozen=True)
class JobType:
    name: str
    run: Callable | None  # None: declared, not built yet
    params: type | None = None  # marshmallow schema class checked at dispatch
    typical_seconds: int = DEFAULT_TYPICAL_SECONDS  # for estimated_completion_at
    timeout: int | None = None  # per attempt; None: JOB_DEFAULT_TIMEOUT_SECONDS
    internal: bool = False  # queued by the service itself; POST /api/ai-jobs refuses it
    # The scope of what the job touches: dispatching needs it besides ai-jobs:write, and
    # its domain's read scope (``read_scope``) shows the job's params, result and error
    # details (DESIGN 3). None: no domain (the tests' own types).
    scope: str | None = None
    # marshmallow schema class of the result (the OpenAPI document's JobResult_<name>)
    result: type | None = None

    @property
    def read_scope(self) -> str | None:
        """The domain's read scope (``pricing:write`` -> ``pricing:read``), or None."""
        return self.scope.partition(":")[0] + ":read" if self.scope else None


_TYPES: dict[str, JobType] = {}
PERIODIC_TASKS: dict[str, tuple[float, Callable]] = {}  # name -> (interval_seconds, func)
BACKGROUND_LOOPS: dict[str, Callable] = {}  # name -> func(stop): every worker process runs it


def register(spec: JobType) -> JobType:
    """Add (or replace) a job type."""
    _TYPES[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    _TYPES.pop(name, None)


def job_type(
    name: str,
    *,
    scope: str | None,
    params: type | None = None,
    typical_seconds: int = DEFAULT_TYPICAL_SECONDS,
    timeout: int | None = None,
    internal: bool = False,
    result: type | None = None,
) -> Callable[[Callable], Callable]:
    """Register the decorated ``run(job, ctx)`` as the handler of job type ``name``;
    ``scope`` is the scope of what it touches (``JobType.scope``); ``result`` documents
    what it returns."""

    def decorator(func):
        register(JobType(name, func, params, typical_seconds, timeout, internal, scope, result))
        return func

    return decorator


def declare_job_type(
    name: str,
    *,
    params: type | None,
    scope: str | None = None,
    typical_seconds: int = DEFAULT_TYPICAL_SECONDS,
    timeout: int | None = None,
) -> JobType:
    """A public type whose handler is not built yet: dispatch checks its params."""
    return register(JobType(name, None, params, typical_seconds, timeout, False, scope))


def periodic(name: str, interval_seconds: float) -> Callable[[Callable], Callable]:
    """Register ``func()`` to run about every ``interval_seconds`` across the whole fleet."""

    def decorator(func):
        PERIODIC_TASKS[name] = (interval_seconds, func)
        return func

    return decorator


def background_loop(name: str) -> Callable[[Callable], Callable]:
    """Register ``func(stop)``, a loop each worker process runs in a thread of its own.

    It runs until the ``threading.Event`` ``stop`` is set (worker shutdown), and makes at
    least one pass even when ``stop`` is set on entry: ``worker --once`` calls it that way
    after draining the queue. It has an app context and its own database connection.
    """

    def decorator(func):
        BACKGROUND_LOOPS[name] = func
        return func

    return decorator


def get(name: str) -> JobType | None:
    """The JobType called ``name``, or None."""
    return _TYPES.get(name)


def public_types() -> tuple[str, ...]:
    """The types ``POST /api/ai-jobs`` accepts, in registration order."""
    return tuple(name for name, spec in _TYPES.items() if not spec.internal)


def known_types() -> tuple[str, ...]:
    """Every type a job row may have (the list filter accepts these)."""
    return tuple(_TYPES)


@functools.cache
def result_shape(schema: type) -> Callable[..., dict]:
    """The compiled shape of a result schema (``shapes.compile_shape``): what a handler
    returns is stored as its document shows it, or the run fails (``ShapeError``)."""
    return compile_shape(schema)


def typical_seconds(name: str) -> int:
    spec = _TYPES.get(name)
    return spec.typical_seconds if spec is not None else DEFAULT_TYPICAL_SECONDS


def load_modules(names: Iterable[str]) -> None:
    """Import the modules that register job types and periodic tasks (idempotent)."""
    for name in names:
        importlib.import_module(name)
