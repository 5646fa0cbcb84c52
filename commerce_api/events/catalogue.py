"""The event catalogue: every event type, what it means and an example body's ``data``.

The README's catalogue and the OpenAPI document are made from this table."""

from .models import EVENT_TYPES

# sent only by POST /api/webhooks/:id/test, to that endpoint alone: nobody subscribes to it
SUBSCRIBABLE = tuple(t for t in EVENT_TYPES if t != "webhook.test")
