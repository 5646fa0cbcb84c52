"""The order state machine: every status rule of an order lives here.

    pending -> confirmed -> processing -> shipped -> delivered -> completed
    pending | confirmed | processing -> cancelled   (once the marketplace approves)

The marketplace may report a later state directly (an FBA order goes from pending to
shipped without our help), so forward moves may skip states. Nothing moves backwards, and
nothing leaves ``completed`` or ``cancelled``.
"""

from typing import Any

from ..errors import ApiError
from .models import OPEN_STATUSES

FLOW = ("pending", "confirmed", "processing", "shipped", "delivered", "completed")
SHIPPED_STATUSES = ("shipped", "delivered", "completed")
TERMINAL_STATUSES = ("completed", "cancelled")

TRANSITIONS = {
    status: frozenset(FLOW[index + 1 :])
    | (frozenset({"cancelled"}) if status in OPEN_STATUSES else frozenset())
    for index, status in enumerate(FLOW)
}
TRANSITIONS["cancelled"] = frozenset()


def can_transition(current: str, target: str) -> bool:
    """True when an order in ``current`` may move to ``target``."""
    return target in TRANSITIONS.get(current, ())


def is_open(status):
    return status in OPEN_STATUSES


def check_transition(current: str, target: str, order_id: str | None = None) -> None:
    if not can_transition(current, target):
        raise ApiError(
            "INVALID_STATUS_TRANSITION",
            f"An order in status {current} cannot move to {target}.",
            details=_details(order_id, current, target),
        )


def check_can_ship(
    status: str, cancellation: dict[str, Any] | None = None, order_id: str | None = None
) -> None:
    """Confirm Shipment: allowed from the open states only."""
    if status in SHIPPED_STATUSES:
        raise ApiError(
            "ALREADY_SHIPPED",
            "The order already has a confirmed shipment.",
            details=_details(order_id, status, "shipped"),
        )
    check_transition(status, "shipped", order_id)
    if cancellation and cancellation.get("status") == "requested":
        raise ApiError(
            "INVALID_STATUS_TRANSITION",
            "A cancellation of this order is waiting for the marketplace's decision.",
            details={**_details(order_id, status, "shipped"), "cancellation": "requested"},
        )


def check_can_request_cancellation(status: str, order_id: str | None = None) -> None:
    """Cancel Order: only an open order can be cancelled (the marketplace decides)."""
    check_transition(status, "cancelled", order_id)


def _details(order_id, current, target):
    details = {"status": current, "target_status": target}
    if order_id:
        details["order_id"] = order_id
    return details
