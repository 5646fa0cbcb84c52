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
from collections.abc import Iterator, Mapping
from typing import Any

import peewee

from .config import current_config
from .db import BaseModel, write_transaction
from .errors import ApiError
from .sql import Statement
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

    def release(self) -> None:
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


def lease_ms(config: Mapping[str, Any] | None = None) -> int:
    config = config or current_config()
    seconds = max(
        float(config["CLAIM_LEASE_SECONDS"]), float(config["MARKETPLACE_DEADLINE_SECONDS"]) + 1
    )
    return int(seconds * 1000)


# a new claim, or the lease of one that ran out, or the holder's own claim again
_CLAIM = Statement(
    "INSERT INTO {C} ({C.resource_id}, {C.tenant_id}, {C.operation}, {C.token},"
    " {C.expires_at}, {C.created_at}) VALUES ({p:resource_id}, {p:tenant_id}, {p:operation},"
    " {p:token}, {p:expires_at}, {p:now})"
    " ON CONFLICT ({C.resource_id}) DO UPDATE SET {C.tenant_id} = excluded.{C.tenant_id},"
    " {C.operation} = excluded.{C.operation}, {C.token} = excluded.{C.token},"
    " {C.expires_at} = excluded.{C.expires_at}, {C.created_at} = excluded.{C.created_at}"
    " WHERE {C}.{C.expires_at} <= {p:now} OR {C}.{C.token} = {p:token} RETURNING {C.token}",
    C=OperationClaim,
)


def claim(tenant_id: str, resource_id: str, operation: str, token: str | None = None) -> Claim:
    """Claim ``resource_id`` for ``operation``, or 409 ``CONCURRENT_UPDATE``.

    ``token`` names the holder: the same token takes its own claim again (a retried job
    resuming its work); without one, every call is a new holder.
    """
    token = token or uuid.uuid4().hex
    now = now_ms()
    expires_at = now + lease_ms()
    params = {
        "resource_id": resource_id,
        "tenant_id": tenant_id,
        "operation": operation,
        "token": token,
        "expires_at": expires_at,
        "now": now,
    }
    with write_transaction():
        row = _CLAIM.execute(params).fetchone()
    if row is None or row[0] != token:
        holder = OperationClaim.get_or_none(OperationClaim.resource_id == resource_id)
        raise _busy(resource_id, holder.operation if holder else operation)
    return Claim(resource_id, operation, token, expires_at)


@contextlib.contextmanager
def claimed(
    tenant_id: str, resource_id: str, operation: str, token: str | None = None
) -> Iterator[Claim]:
    """``claim`` for the block; released at its end unless the block released it already
    (in the transaction that recorded the outcome)."""
    held = claim(tenant_id, resource_id, operation, token)
    try:
        yield held
    finally:
        if not held.released:
            with write_transaction():
                held.release()


def live_claim(resource_id: str) -> OperationClaim | None:
    """The unexpired claim on ``resource_id``, or None."""
    return OperationClaim.get_or_none(
        (OperationClaim.resource_id == resource_id) & (OperationClaim.expires_at > now_ms())
    )


def refuse_if_claimed(resource_id: str) -> None:
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
