"""The outbox table."""

from peewee import BigIntegerField, CharField

from ..db import BaseModel, JSONField
from ..timeutil import now_ms

EVENT_TYPES = (
    "order.created",
    "order.updated",
    "order.shipped",
    "order.cancellation_requested",
    "order.cancelled",
    "product.created",
    "product.updated",
    "product.archived",
    "inventory.adjusted",
    "inventory.status_changed",
    "transfer.created",
    "transfer.shipped",
    "transfer.received",
    "transfer.cancelled",
    "ai_job.completed",
    "ai_job.failed",
    "pricing.recommendation.created",
    "pricing.recommendation.applied",
    "listing.sync_failed",
    "webhook.test",  # sent only by POST /api/webhooks/:id/test, to that endpoint alone
)


class Event(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant_id = CharField(max_length=36)  # indexed by (tenant_id, created_at) below
    type = CharField(max_length=64)
    resource_type = CharField(max_length=32)
    resource_id = CharField(max_length=80)
    data = JSONField()
    created_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = ((("tenant_id", "created_at"), False),)
