"""Bounds on outbound marketplace calls: a wall-clock deadline and a per-tenant cap.

- Every call of the ``http`` connector ends by ``MARKETPLACE_DEADLINE_SECONDS`` of wall
  clock (the sockets are shut when it strikes, ``netguard.time_limit``), or earlier when an
  outer deadline (a whole bulk request, ``deadline_scope``) comes first.
- At most ``MARKETPLACE_TENANT_CONCURRENCY`` calls of one tenant are in flight at once in
  one process. The cap is per process: N API processes allow N times as many. One more
  call from an API request is refused at once (``TenantBusy``, 503 to the client); one
  from background work (a job, the listing push service, the CLI) waits for a slot, in
  the order the callers came, up to ``MARKETPLACE_SLOT_WAIT_SECONDS``: the service's own
  cap never fails its own work. Calls end by their deadline, so a slot always comes free.
"""

import contextlib
import threading
import time
from collections.abc import Iterator

from .base import MarketplaceUnavailable

_outer = threading.local()
_lock = threading.Lock()
_freed = threading.Condition(_lock)  # notified when a slot comes free
_in_flight = {}  # tenant id -> calls in flight in this process
_waiting = {}  # tenant id -> callers waiting for a slot (first come, first served)


def remaining(default: float) -> float:
    """Seconds this call may take: ``default``, or less when an outer deadline is nearer.

    Raises MarketplaceUnavailable (``DEADLINE_EXCEEDED``) when the outer deadline has passed.
    """
    outer = getattr(_outer, "deadline", None)
    if outer is None:
        return float(default)
    left = outer - time.monotonic()
    if left <= 0:
        raise MarketplaceUnavailable(
            "The request's deadline passed before the marketplace was called.",
            code="DEADLINE_EXCEEDED",
        )
    return min(float(default), left)


def outer_deadline_passed() -> bool:
    """True when this thread is inside a ``deadline_scope`` whose deadline has passed."""
    outer = getattr(_outer, "deadline", None)
    return outer is not None and time.monotonic() >= outer


@contextlib.contextmanager
def deadline_scope(seconds: float) -> Iterator[None]:
    """Every marketplace call of this thread inside the block ends by ``seconds`` from now."""
    previous = getattr(_outer, "deadline", None)
    deadline = time.monotonic() + float(seconds)
    _outer.deadline = deadline if previous is None else min(previous, deadline)
    try:
        yield
    finally:
        _outer.deadline = previous


def start_serving() -> None:
    """Mark this thread as serving an API request: a busy tenant is refused at once."""
    _outer.serving = True


def stop_serving() -> None:
    """The request is over (the thread may serve background work next)."""
    _outer.serving = False


def serving() -> bool:
    """True when this thread serves an API request (it may not wait for a slot)."""
    return getattr(_outer, "serving", False)


class TenantBusy(Exception):
    """The tenant already has its cap of outbound calls in flight in this process."""

    def __init__(self, cap):
        super().__init__(f"{cap} marketplace call(s) of this tenant are already in flight.")
        self.cap = cap


@contextlib.contextmanager
def tenant_slot(tenant_id: str, cap: int, wait: float | None = None) -> Iterator[None]:
    """Hold one of the tenant's ``cap`` outbound slots.

    ``wait`` None: raise TenantBusy at once when none is free. Otherwise wait up to
    ``wait`` seconds for one, behind the callers already waiting (TenantBusy after that).
    """
    cap = max(1, int(cap))
    with _lock:
        if _in_flight.get(tenant_id, 0) >= cap or _waiting.get(tenant_id):
            if wait is None:
                raise TenantBusy(cap)
            _wait_turn(tenant_id, cap, float(wait))
        _in_flight[tenant_id] = _in_flight.get(tenant_id, 0) + 1
    try:
        yield
    finally:
        with _lock:
            left = _in_flight[tenant_id] - 1
            if left:
                _in_flight[tenant_id] = left
            else:
                del _in_flight[tenant_id]
            _freed.notify_all()


def _wait_turn(tenant_id, cap, seconds):
    """Wait (holding ``_lock`` between checks) until this caller is first in line and a
    slot is free; raise TenantBusy when ``seconds`` pass first."""
    ticket = object()
    line = _waiting.setdefault(tenant_id, [])
    line.append(ticket)
    deadline = time.monotonic() + seconds
    try:
        while line[0] is not ticket or _in_flight.get(tenant_id, 0) >= cap:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TenantBusy(cap)
            _freed.wait(left)
    finally:
        line.remove(ticket)
        if not line:
            del _waiting[tenant_id]
        _freed.notify_all()  # the next in line may go now


def in_flight(tenant_id: str) -> int:
    """Calls of the tenant in flight in this process now (for tests and benchmarks)."""
    with _lock:
        return _in_flight.get(tenant_id, 0)
