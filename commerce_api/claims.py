"""Claims: a short lease on one order or recommendation while its operation is pushed.

Claim before push (DESIGN 9): a shipment confirmation, a cancellation request and a price
apply first claim their resource in a short transaction of its own, then call the
marketplace with no transaction open, then record the outcome and release the claim in one
transaction. A concurrent request finds the claim and gets 409 ``CONCURRENT_UPDATE`` at
once, without calling the marketplace. The lease (``CLAIM_LEASE_SECONDS``, never shorter
than the marketplace deadline plus a second) frees the resource when the holder died.

The claim row is also the intent: a claim left behind by a crash says a push may have
reached the marketplace without its outcome being recorded.
"""

import contextlib
import uuid

import peewee

from .config import current_config
from .db import BaseModel, db, write_transaction
from .errors import ApiError
from .sql import quote
from .timeutil import now_ms

RETRY_AFTER = 1  # seconds: a claim is held for one marketplace call


class OperationClaim(BaseModel):
    resource_id = peewee.CharField(primary_key=True)
    tenant_id = peewee.CharField()
    operation = peewee.CharField()
    token = peewee.CharField()
    expires_at = peewee.BigIntegerField()
    created_at = peewee.BigIntegerField()


class Claim:
    """A claim this process holds; ``release`` it in the outcome's transaction."""

    def __init__(self, resource_id, operation, token, expires_at):
        self.resource_id = resource_id
        self.operation = operation
        self.token = token
        self.expires_at = expires_at
        self.released = False

    def release(self):
        """Give the resource back (a no-op when the lease ran out and another took it)."""
        (
            OperationClaim.delete()
            .where(
                (OperationClaim.resource_id == self.resource_id)
                & (OperationClaim.token == self.token)
            )
            .execute()
        )
        self.released = True


def lease_ms(config=None):
    config = config or current_config()
    seconds = max(
        float(config["CLAIM_LEASE_SECONDS"]), float(config["MARKETPLACE_DEADLINE_SECONDS"]) + 1
    )
    return int(seconds * 1000)


def _claim_sql():
    table, mark = quote(OperationClaim._meta.table_name), db.param
    columns = ("resource_id", "tenant_id", "operation", "token", "expires_at", "created_at")
    updates = ", ".join(f"{quote(c)} = excluded.{quote(c)}" for c in columns[1:])
    return (
        f"INSERT INTO {table} ({', '.join(quote(c) for c in columns)}) "
        f"VALUES ({', '.join([mark] * len(columns))}) "
        f'ON CONFLICT ("resource_id") DO UPDATE SET {updates} '
        f'WHERE {table}."expires_at" <= {mark} OR {table}."token" = {mark} '
        'RETURNING "token"'
    )


def claim(tenant_id, resource_id, operation, token=None):
    """Claim ``resource_id`` for ``operation``, or 409 ``CONCURRENT_UPDATE``.

    ``token`` names the holder: the same token takes its own claim again (a retried job
    resuming its work); without one, every call is a new holder.
    """
    token = token or uuid.uuid4().hex
    now = now_ms()
    expires_at = now + lease_ms()
    params = [resource_id, tenant_id, operation, token, expires_at, now, now, token]
    with write_transaction():
        row = db.execute_sql(_claim_sql(), params).fetchone()
    if row is None or row[0] != token:
        holder = OperationClaim.get_or_none(OperationClaim.resource_id == resource_id)
        raise _busy(resource_id, holder.operation if holder else operation)
    return Claim(resource_id, operation, token, expires_at)


@contextlib.contextmanager
def claimed(tenant_id, resource_id, operation, token=None):
    """``claim`` for the block; released at its end unless the block released it already
    (in the transaction that recorded the outcome)."""
    held = claim(tenant_id, resource_id, operation, token)
    try:
        yield held
    finally:
        if not held.released:
            with write_transaction():
                held.release()


def live_claim(resource_id):
    """The unexpired claim on ``resource_id``, or None."""
    return OperationClaim.get_or_none(
        (OperationClaim.resource_id == resource_id) & (OperationClaim.expires_at > now_ms())
    )


def refuse_if_claimed(resource_id):
    """409 ``CONCURRENT_UPDATE`` while an operation holds ``resource_id``."""
    holder = live_claim(resource_id)
    if holder is not None:
        raise _busy(resource_id, holder.operation)


def _busy(resource_id, operation):
    return ApiError(
        "CONCURRENT_UPDATE",
        f"Another request is already pushing {operation} for {resource_id}; retry shortly.",
        details={"resource_id": resource_id, "operation": operation, "retry_after": RETRY_AFTER},
        headers={"Retry-After": str(RETRY_AFTER)},
    )
