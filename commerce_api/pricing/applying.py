"""Applying recommendations from a ``pricing_recalculate`` job with ``apply: true``.

Recorded as it happens (DESIGN 9): the recommendations are written (pending) before any
push; each push first claims its recommendation with the job's token (the intent), then
calls the marketplace with the recommendation id as ``Idempotency-Key``, then records the
outcome (listing price, ``applied``, ``applied_at`` = when the push was accepted) and
releases the claim in one transaction. A worker killed between push and outcome leaves the
claim behind: the retried job takes it back first and pushes the same price with the same
key (the marketplace recognises it), so the service never leaves a marketplace price it
does not know. An unavailable marketplace (429, 503, past the deadline) is waited for as
it asks (``Retry-After``, capped) and asked again; when it stays unavailable the attempt
fails as retryable with its claims kept, and the retried job continues from them.

Each try carries the listing's price version the recommendation was computed from
(``listing_price_version``): a try, a retried try or a resumed push is dropped when the
listing has taken a newer price since (an API apply, a newer recalculation, a PATCH), and
so is the record of a push that met a newer price on the way (issue 31: a resumed job once
pushed 8.93 over the 9.10 a newer recalculation had pushed meanwhile). Dropped, the
recommendation is dismissed; when an earlier try may have reached the marketplace, the
listing is made pending so that its current price is pushed over it.
"""

import time
import uuid
from typing import Any

from ..claims import Claim, OperationClaim, claim
from ..db import write_transaction
from ..errors import ApiError
from ..timeutil import now_ms
from .models import Recommendation
from .recommendations import (
    APPLY,
    drop_outdated,
    listed_products,
    outdated_error,
    push_recommendation,
)

PUSH_ATTEMPTS = 5  # tries of one push while the marketplace answers "unavailable"
MAX_WAIT_SECONDS = 30.0  # the longest Retry-After honoured between two tries


class StillUnavailable(Exception):
    """The marketplace stayed unavailable: the job attempt fails as retryable."""

    def __init__(self, error):
        super().__init__(error.message)
        self.error = error


class PriceApplier:
    """Pushes a job's recommendations one at a time, each claimed, pushed and recorded."""

    def __init__(self, tenant_id, marketplace, connection, job_id, created_by, heartbeat=None):
        self.tenant_id = tenant_id
        self.marketplace = marketplace
        self.connection = connection
        self.job_id = job_id
        self.created_by = created_by
        self.heartbeat = heartbeat
        # a retried attempt of the same job holds the same token: it takes back its claims
        self.token = f"job:{job_id}" if job_id else uuid.uuid4().hex
        self.applied_count = 0
        self.resumed_count = 0

    def _wait(self, seconds):
        deadline = time.monotonic() + seconds
        while True:
            if self.heartbeat is not None:
                self.heartbeat()  # a job taken away must stop pushing prices
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 1.0))

    def _check_current(self, rec: dict[str, Any], held: Claim, maybe_landed: bool) -> None:
        """Before a try: drop the push (409 ``RECOMMENDATION_OUTDATED``) when the listing
        took a newer price than the one ``rec`` was computed from."""
        expected = rec.get("listing_price_version")
        if expected is None:  # made before price versions: pushed as before
            return
        listed = listed_products(self.tenant_id, rec["marketplace"], [rec["sku"]])
        product = listed.get(rec["sku"])
        if product is None or product["listing_price_version"] == expected:
            return  # (no listing: the push path says LISTING_NOT_FOUND)
        with write_transaction():
            drop_outdated(self.tenant_id, rec, product["listing_id"], held, maybe_landed)
        raise outdated_error(rec, product["listing_price_version"])

    def _push(self, rec, product, held, pushed_at):
        """Push until the marketplace decides; the accepted outcome is recorded."""
        for attempt in range(PUSH_ATTEMPTS):
            if self.heartbeat is not None:
                self.heartbeat()
            # a retried or resumed try may have landed before: re-checked every time
            self._check_current(rec, held, maybe_landed=attempt > 0 or pushed_at is None)
            try:
                return push_recommendation(
                    self.tenant_id,
                    rec,
                    product,
                    self.connection,
                    held,
                    self.created_by,
                    details={"job_id": self.job_id},
                    pushed_at=pushed_at,  # the first try may have landed
                    price_version=rec.get("listing_price_version"),
                )
            except ApiError as error:
                if error.code != "MARKETPLACE_UNAVAILABLE":
                    raise
                if attempt == PUSH_ATTEMPTS - 1:
                    # the claim stays: the push may have landed (an answer past the
                    # deadline); the retried job pushes it again with the same key
                    raise StillUnavailable(error) from None
                retry_after = float(error.details.get("retry_after") or 1)
                self._wait(min(max(retry_after, 0.1), MAX_WAIT_SECONDS))

    def apply(
        self, rec: dict[str, Any], product: dict[str, Any], resumed: bool = False
    ) -> dict[str, Any] | None:
        """Claim, push and record one recommendation; returns None or the error item.
        ``resumed``: a killed attempt may have pushed it at a time not known."""
        try:
            held = claim(self.tenant_id, rec["id"], APPLY, token=self.token)
        except ApiError as error:  # an API apply of the same recommendation is under way
            return {"code": error.code, "message": error.message}
        try:
            self._push(rec, product, held, None if resumed else now_ms())
        except StillUnavailable:
            raise
        except ApiError as error:
            held.release()  # decided (a rejection, the listing gone): nothing to finish
            item = {"code": error.code, "message": error.message}
            if "marketplace_code" in error.details:
                item["marketplace_code"] = error.details["marketplace_code"]
            return item
        self.applied_count += 1
        return None

    def resume(self) -> None:
        """Finish the pushes a killed or failed attempt of this job left claimed."""
        held = list(
            OperationClaim.select(OperationClaim.resource_id).where(
                (OperationClaim.tenant_id == self.tenant_id)
                & (OperationClaim.token == self.token)
                & (OperationClaim.operation == APPLY)
            )
        )
        for row in held:
            rec = Recommendation.select().where(Recommendation.id == row.resource_id).dicts()
            rec = rec.first()
            product = None
            if rec is not None and rec["status"] != "applied":
                product = listed_products(self.tenant_id, rec["marketplace"], [rec["sku"]])
                product = product.get(rec["sku"])
            if product is None:  # applied meanwhile, or no longer listed
                OperationClaim.delete().where(
                    (OperationClaim.resource_id == row.resource_id)
                    & (OperationClaim.token == self.token)
                ).execute()
                continue
            if self.apply(rec, product, resumed=True) is None:
                self.resumed_count += 1
