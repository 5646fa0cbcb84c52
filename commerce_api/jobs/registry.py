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

The decorators only mark a function; nothing exists until a domain registers it: each
domain's ``tasks.register()`` calls ``register_marked`` on its module (pypi/warehouse's
``includeme``), and ``commerce_api.tasks.register_all`` (called by ``create_app``, which
the API and the worker both go through) calls every domain's ``register``. The registry
knows no domain; the ``EXTRA_TASK_MODULES`` setting adds modules of marked functions (the
tests' own job types).
"""

import functools
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

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


def _mark(func, add, item):
    """Note on ``func`` what registering it will add (a function may carry several)."""
    func.registrations = (*getattr(func, "registrations", ()), (add, item))


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
        spec = JobType(name, func, params, typical_seconds, timeout, internal, scope, result)
        _mark(func, register, (spec,))
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
        _mark(func, add_periodic, (name, interval_seconds, func))
        return func

    return decorator


def add_periodic(name: str, interval_seconds: float, func: Callable) -> None:
    """Add (or replace) a periodic task."""
    PERIODIC_TASKS[name] = (interval_seconds, func)


def background_loop(name: str) -> Callable[[Callable], Callable]:
    """Register ``func(stop)``, a loop each worker process runs in a thread of its own.

    It runs until the ``threading.Event`` ``stop`` is set (worker shutdown), and makes at
    least one pass even when ``stop`` is set on entry: ``worker --once`` calls it that way
    after draining the queue. It has an app context and its own database connection.
    """

    def decorator(func):
        _mark(func, add_background_loop, (name, func))
        return func

    return decorator


def add_background_loop(name: str, func: Callable) -> None:
    """Add (or replace) a background loop."""
    BACKGROUND_LOOPS[name] = func


def marked(module: ModuleType) -> list[Callable]:
    """The functions of ``module`` a decorator above marked, in the module's order."""
    return [
        value
        for name, value in vars(module).items()
        if callable(value)
        and getattr(value, "__module__", None) == module.__name__
        and getattr(value, "registrations", None)
    ]


def register_marked(module: ModuleType | str) -> None:
    """Register what the decorators marked in ``module`` (or the module of that name,
    imported): a domain's ``register`` calls this; registering again changes nothing."""
    if isinstance(module, str):
        module = importlib.import_module(module)
    for func in marked(module):
        for add, args in func.registrations:
            add(*args)


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
    """Import the modules named (``EXTRA_TASK_MODULES``) and register what they mark, or
    call their own ``register()`` (idempotent)."""
    for name in names:
        module = importlib.import_module(name)
        own = getattr(module, "register", None)
        if callable(own) and getattr(own, "__module__", None) == name:
            own()
        else:
            register_marked(module)
