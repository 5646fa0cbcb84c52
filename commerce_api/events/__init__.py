"""The event outbox: domain changes write events in their own transaction."""

from .outbox import emit, event_params, write_events  # noqa: F401
