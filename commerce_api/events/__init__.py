"""The event outbox: domain changes write events in their own transaction."""

from .outbox import emit  # noqa: F401
