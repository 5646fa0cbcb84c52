"""The events feed: the tenant's outbox events within retention, as webhooks carry them.

No Flask here: the caller passes what it may read (``has_scope``) and the retention.
"""

from collections.abc import Callable
from typing import Any

from peewee import SQL, fn

from ..errors import ApiError
from ..pagination import paginate_args
from ..shapes import field_names
from ..timeutil import now_ms
from .models import EVENT_TYPES, Event
from .outbox import serialize_event
from .shapes import EventSchema

# An event is shown only to a caller holding the read scope of its domain (the part of
# its type before the first dot).
DOMAIN_SCOPES = {
    "order": "orders:read",
    "product": "products:read",
    "listing": "products:read",
    "inventory": "inventory:read",
    "transfer": "inventory:read",
    "pricing": "pricing:read",
    "ai_job": "ai-jobs:read",
    "webhook": "webhooks:read",
}
READ_SCOPES = tuple(dict.fromkeys(DOMAIN_SCOPES.values()))
EVENT_FIELDS = field_names(EventSchema)
# what ``type`` accepts: an event type, or ``<domain>.*`` for every type of a domain
TYPE_FILTERS = (*EVENT_TYPES, *(f"{domain}.*" for domain in DOMAIN_SCOPES))


def domain_of(event_type: str) -> str:
    return event_type.split(".", 1)[0]


def scope_of(event_type: str) -> str | None:
    """The read scope an event of this type needs (None: a domain no scope reads)."""
    return DOMAIN_SCOPES.get(domain_of(event_type))


def _cutoff(retention_days, now=None):
    return (now_ms() if now is None else now) - int(retention_days * 86_400_000)


def _type_prefix(domain):
    prefix = domain + "."
    return fn.SUBSTR(Event.type, 1, len(prefix)) == prefix


def _readable(query, has_scope):
    """Keep the events of the domains the caller may read (all of them for ``all``)."""
    domains = [d for d, scope in DOMAIN_SCOPES.items() if has_scope(scope)]
    if len(domains) == len(DOMAIN_SCOPES):
        return query
    condition = None
    for domain in domains:
        term = _type_prefix(domain)
        condition = term if condition is None else condition | term
    return query.where(condition) if condition is not None else query.where(SQL("1 = 0"))


def _check_type_filter(type_filter, has_scope):
    scope = scope_of(type_filter)
    if scope is None or not has_scope(scope):
        raise ApiError(
            "INSUFFICIENT_SCOPE",
            f"Events of type {type_filter} need the {scope} scope.",
            details={"required_scope": scope},
        )


def list_events(
    tenant_id: str, has_scope: Callable[[str], bool], retention_days: int, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The tenant's events, newest first: filters ``type``, ``created_after``,
    ``created_before`` (both inclusive), within the retention."""
    query = Event.select().where(
        (Event.tenant_id == tenant_id) & (Event.created_at >= _cutoff(retention_days))
    )
    type_filter = args.get("type")
    if type_filter:
        _check_type_filter(type_filter, has_scope)
        if type_filter.endswith(".*"):
            query = query.where(_type_prefix(domain_of(type_filter)))
        else:
            query = query.where(Event.type == type_filter)
    else:
        query = _readable(query, has_scope)
    if args.get("created_after") is not None:
        query = query.where(Event.created_at >= args["created_after"])
    if args.get("created_before") is not None:
        query = query.where(Event.created_at <= args["created_before"])
    readable = sorted(d for d, scope in DOMAIN_SCOPES.items() if has_scope(scope))
    rows, meta = paginate_args(
        query,
        args,
        sort_field=Event.created_at,
        tiebreak=Event.id,
        kind="events",
        # a cursor continues only the query that issued it (tenant, filters, what is readable)
        scope=[
            tenant_id,
            type_filter,
            args.get("created_after"),
            args.get("created_before"),
            readable,
        ],
    )
    return [serialize_event(row) for row in rows], meta


def get_event(
    tenant_id: str, event_id: str, has_scope: Callable[[str], bool], retention_days: int
) -> dict[str, Any]:
    event = Event.get_or_none(
        (Event.id == event_id)
        & (Event.tenant_id == tenant_id)
        & (Event.created_at >= _cutoff(retention_days))
    )
    if event is None:
        raise ApiError("EVENT_NOT_FOUND", details={"id": event_id})
    _check_type_filter(event.type, has_scope)
    return serialize_event(event)
