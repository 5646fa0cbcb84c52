"""Webhook endpoints, their deliveries and each delivery's attempts (migration 0009).

The outbox itself (``events.models.Event``) gains two columns in the same migration, kept
out of the Event model so that the outbox INSERT stays as it is: ``fanned_out_at`` (when
the delivery service turned the event into deliveries) and, on PostgreSQL, ``seq`` (a
BIGSERIAL giving the event order; SQLite's ``rowid`` plays that part there).
"""

from peewee import BigAutoField, BigIntegerField, BooleanField, CharField, IntegerField, TextField

from ..crypto import EncryptedTextField
from ..db import BaseModel, JSONField
from ..timeutil import now_ms

DELIVERY_STATUSES = ("pending", "succeeded", "failed")


class WebhookEndpoint(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant_id = CharField(max_length=36)
    url = CharField(max_length=2048)
    events = JSONField()  # as given: event types, or ["*"]
    description = TextField(null=True)
    is_active = BooleanField(default=True)
    disabled_reason = TextField(null=True)
    # why an active endpoint cannot be sent to now (its secret is unreadable); 0052
    status_reason = TextField(null=True)
    # Encrypted at rest (crypto.py), decrypted to sign each delivery. Shown once, at
    # creation and rotation.
    secret = EncryptedTextField()
    previous_secret = EncryptedTextField(null=True)  # also signs during the grace
    previous_secret_expires_at = BigIntegerField(null=True)
    # when the unbroken run of failed attempts began (migration 0030); None: not failing
    failing_since = BigIntegerField(null=True)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "webhook_endpoint"
        indexes = ((("tenant_id", "created_at"), False),)


class WebhookDelivery(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant_id = CharField(max_length=36)
    endpoint_id = CharField(max_length=40)
    event_id = CharField(max_length=40, index=True)
    event_type = CharField(max_length=64)
    # "resource_type:resource_id": deliveries with the same key to one endpoint go out in
    # event order. None for a redelivery (sent on its own, outside the order).
    resource_key = CharField(max_length=120, null=True)
    event_seq = BigIntegerField()  # the event's place in the outbox order
    status = CharField(max_length=16, default="pending")
    attempt_count = IntegerField(default=0)
    next_attempt_at = BigIntegerField(null=True)
    lease_until = BigIntegerField(null=True)  # a worker is sending it until then
    lease_token = CharField(max_length=64, null=True)
    last_status_code = IntegerField(null=True)
    last_error = TextField(null=True)
    last_duration_ms = IntegerField(null=True)
    redelivery_of = CharField(max_length=40, null=True)
    created_at = BigIntegerField(default=now_ms)
    delivered_at = BigIntegerField(null=True)
    finished_at = BigIntegerField(null=True, index=True)  # succeeded or failed for good

    class Meta:
        table_name = "webhook_delivery"
        indexes = ((("endpoint_id", "created_at"), False),)


class WebhookAttempt(BaseModel):
    id = BigAutoField()
    delivery_id = CharField(max_length=40, index=True)
    attempted_at = BigIntegerField()
    status_code = IntegerField(null=True)
    duration_ms = IntegerField()
    error = TextField(null=True)
    # what the receiver answered (migration 0115): the body's first 4 KiB as text (None:
    # no answer, or not text), its size as read, and whether it was not text
    response_body = TextField(null=True)
    response_body_size = IntegerField(null=True)
    response_body_binary = BooleanField(null=True)

    class Meta:
        table_name = "webhook_attempt"


# The delivery service's partial indexes on webhook_delivery (due, order, endpoint_due,
# leased) are created by migrations 0009 and 0030.
