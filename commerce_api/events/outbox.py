"""Write events to the outbox inside the caller's transaction."""

from collections.abc import Sequence
from typing import Any

from ..db import db
from ..ids import new_id
from ..shapes import compile_serializer
from ..sql import executemany, insert_statement
from ..timeutil import now_ms
from .models import EVENT_TYPES, Event
from .shapes import EventSchema

_FIELDS = tuple(Event._meta.sorted_fields)


def _insert_statement():
    """The outbox INSERT: every change of the service writes one (the worker, many per
    second), and peewee would compose it on every call (~200 us)."""
    return insert_statement(Event)  # every field, in _FIELDS order


def event_params(
    tenant_id: str,
    event_type: str,
    resource_type: str,
    resource_id: str,
    data: dict[str, Any],
    created_at: int | None = None,
) -> list[Any]:
    """One outbox row as statement parameters (for ``write_events``)."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    values = {
        "id": new_id("event"),
        "tenant_id": tenant_id,
        "type": event_type,
        "resource_type": resource_type,
        "resource_id": resource_id,
        "data": data,
        "created_at": now_ms() if created_at is None else created_at,
    }
    for field in _FIELDS:  # a column added later gets its default, as create() would
        if field.name not in values:
            values[field.name] = field.default() if callable(field.default) else field.default
    return [field.db_value(values[field.name]) for field in _FIELDS]


def write_events(rows: Sequence[Sequence[Any]]) -> None:
    """Insert rows made by ``event_params``, inside the caller's transaction."""
    if db.transaction_depth() == 0:
        raise RuntimeError("events must be written inside the change's transaction")
    if rows:
        executemany(_insert_statement(), rows)


def emit(
    tenant_id: str, event_type: str, resource_type: str, resource_id: str, data: dict[str, Any]
) -> str:
    """Record ``event_type`` for delivery; call it inside the change's own transaction.

    Raising here rolls the change back with it, so a change never lands without its event.
    Returns the event id.
    """
    row = event_params(tenant_id, event_type, resource_type, resource_id, data)
    write_events([row])
    return row[0]


# The delivered body: ``{id, type, created_at, tenant_id, data}``.
serialize_event = compile_serializer(EventSchema)
