"""What an endpoint subscribes to: the event types it names (or ``"*"``), the read scopes
receiving them needs, and whether an event matches. Endpoints check subscriptions when
they are written; fan-out and recovery match events against them."""

from collections.abc import Callable, Iterable

from ..errors import ApiError, validation_error
from ..events.catalogue import SUBSCRIBABLE
from ..events.feed import scope_of

WILDCARD = "*"


def check_events(events: Iterable[str]) -> list[str]:
    """A non-empty list of known event types, or ``["*"]``; returned as given."""
    if not isinstance(events, list) or not events:
        raise validation_error({"events": ['At least one event type, or ["*"] for all.']})
    problems = []
    for item in events:
        if item == WILDCARD:
            if len(events) > 1:
                problems.append('"*" stands alone: it already means every event type.')
        elif item not in SUBSCRIBABLE:
            problems.append(f"Unknown event type: {item}.")
    if len(set(events)) != len(events):
        problems.append("An event type is listed twice.")
    if problems:
        raise validation_error({"events": sorted(set(problems))})
    return list(events)


def require_event_scopes(events: Iterable[str], has_scope: Callable[[str], bool] | None) -> None:
    """Receiving events of a domain needs that domain's read scope, as the events feed
    does (``"*"``: every domain's): subscribing an endpoint, pointing it elsewhere and
    recovering its events would otherwise read what the caller's scopes do not cover.
    ``has_scope`` None: the operator (no check)."""
    if has_scope is None:
        return
    events = list(events)
    types = SUBSCRIBABLE if WILDCARD in events else events
    missing = sorted(
        {scope for scope in map(scope_of, types) if scope is None or not has_scope(scope)},
        key=str,
    )
    if missing:
        raise ApiError(
            "INSUFFICIENT_SCOPE",
            "Receiving these events needs the read scope of each of their domains: "
            + ", ".join(str(scope) for scope in missing)
            + ".",
            details={"required_scope": missing[0], "required_scopes": missing},
        )


def matches(events: Iterable[str], event_type: str) -> bool:
    """Whether an endpoint subscribed to ``events`` receives ``event_type``."""
    return WILDCARD in events or event_type in events
