"""Bounds on outbound marketplace calls: a wall-clock deadline and a per-tenant cap.

- Every call of the ``http`` connector ends by ``MARKETPLACE_DEADLINE_SECONDS`` of wall
  clock (the sockets are shut when it strikes, ``netguard.time_limit``), or earlier when an
  outer deadline (a whole bulk request, ``deadline_scope``) comes first.
- At most ``MARKETPLACE_TENANT_CONCURRENCY`` calls of one tenant are in flight at once in
  one process; one more is refused at once (``TenantBusy``), never queued. The cap is per
  process: N API processes allow N times as many.
"""

import contextlib
import threading
import time

from .base import MarketplaceUnavailable

_outer = threading.local()
_lock = threading.Lock()
_in_flight = {}  # tenant id -> calls in flight in this process


def remaining(default):
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


def outer_deadline_passed():
    """True when this thread is inside a ``deadline_scope`` whose deadline has passed."""
    outer = getattr(_outer, "deadline", None)
    return outer is not None and time.monotonic() >= outer


@contextlib.contextmanager
def deadline_scope(seconds):
    """Every marketplace call of this thread inside the block ends by ``seconds`` from now."""
    previous = getattr(_outer, "deadline", None)
    deadline = time.monotonic() + float(seconds)
    _outer.deadline = deadline if previous is None else min(previous, deadline)
    try:
        yield
    finally:
        _outer.deadline = previous


class TenantBusy(Exception):
    """The tenant already has its cap of outbound calls in flight in this process."""

    def __init__(self, cap):
        super().__init__(f"{cap} marketplace call(s) of this tenant are already in flight.")
        self.cap = cap


@contextlib.contextmanager
def tenant_slot(tenant_id, cap):
    """Hold one of the tenant's ``cap`` outbound slots, or raise TenantBusy at once."""
    with _lock:
        count = _in_flight.get(tenant_id, 0)
        if count >= cap:
            raise TenantBusy(cap)
        _in_flight[tenant_id] = count + 1
    try:
        yield
    finally:
        with _lock:
            left = _in_flight[tenant_id] - 1
            if left:
                _in_flight[tenant_id] = left
            else:
                del _in_flight[tenant_id]
