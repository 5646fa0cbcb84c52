"""Write events to the outbox inside the caller's transaction."""

from ..db import db
from ..ids import new_id
from ..timeutil import format_ms, now_ms
from .models import EVENT_TYPES, Event


def emit(tenant_id, event_type, resource_type, resource_id, data):
    """Record ``event_type`` for delivery; call it inside the change's own transaction.

    Raising here rolls the change back with it, so a change never lands without its event.
    """
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    if db.transaction_depth() == 0:
        raise RuntimeError("emit() must run inside the change's transaction")
    created = now_ms()
    event = Event.create(
        id=new_id("event"),
        tenant_id=tenant_id,
        type=event_type,
        resource_type=resource_type,
        resource_id=resource_id,
        data=data,
        created_at=created,
    )
    return event


def serialize_event(event):
    """The delivered body: ``{id, type, created_at, tenant_id, data}``."""
    return {
        "id": event.id,
        "type": event.type,
        "created_at": format_ms(event.created_at),
        "tenant_id": event.tenant_id,
        "data": event.data,
    }
