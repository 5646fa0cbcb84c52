"""Batch pushes and asynchronous acceptance (DESIGN 13), for any connector.

A connector whose ``batch_size`` is above 1 takes many pending listings of one
connection in one ``push_listings`` call (Amazon: one ``JSON_LISTINGS_FEED``; the ``http``
connector: ``POST /products/batch``) and answers one ``ListingResult`` per listing. The
push service claims up to that many due listings of the connection at once
(``listing_push.claim``: the same lease and intent as single pushes) and records each
outcome as a single push's.

A push the marketplace only *accepted for processing* leaves the listing ``submitted``
with its ``submission`` (``{kind, id, sent, at, version}``): never ``in_sync`` for a value
the marketplace has not confirmed. Submitted listings are due for a *check* (claimed
under the same lease columns, ``CHECK_LEASE``): ``check_submissions`` reads the result
(a feed's processing report, the listing as the marketplace now shows it) and the listing
becomes ``in_sync`` or ``error`` with the marketplace's code and message (the
``listing.sync_failed`` event as for any refusal), or stays submitted and is read again
later (at growing intervals, up to ``MAX_CHECK_DELAY_MS``). A change made meanwhile makes
the listing ``pending`` again (``products.desired_state.mark_listings_pending``): it is pushed
anew, and a late result only moves ``synced_version`` (the value the marketplace took).

**Writes that land late** (issue 32). A submission the connector marks ``unordered``
(Amazon's ``JSON_LISTINGS_FEED``: processed asynchronously, minutes later, in no
documented order with patches) may land *after* a newer write of the same listing. So a
listing pushed anew while such a submission of it is unresolved keeps it, in the new
submission, under ``superseded`` (with those it superseded itself): nothing is forgotten.
A check reads the superseded writes too (with the listing's own, in the same
``check_submissions`` call: one ``getFeed`` per feed). The listing stays ``submitted``
while any of them is unprocessed, even when its own write is confirmed; once all are
processed, if any of them *landed* (its message was accepted) it may have overwritten
the newer value, so the listing is pushed anew from the current state (``pending``, its
submission cleared, a ``late_write`` row in the sync history); only when none landed does
its own result decide (``in_sync``, ``error``); a patch of ours that does not show because
an earlier feed landed over it is not waited for (it never will). A push answered at once
(accepted: nothing to send; rejected) while such writes are unresolved is recorded as
``submitted`` with its result kept (kind ``confirmed``) and checked the same way; a push
answered at once with none unresolved clears the listing's old submission. The rule
kept: the last write that lands at the marketplace is our current state, and a listing is
never ``in_sync`` while an earlier write of ours may still land over it; a push never
waits for a feed.
"""

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from ..db import write_transaction
from ..leases import DueProbe, Lease, lease_free
from ..products.models import Listing, Product
from ..sql import Statement
from ..timeutil import now_ms
from . import listing_push
from .base import ListingResult, MarketplaceRejection, MarketplaceUnavailable, SubmissionCheck
from .gateway import call
from .listing_push import ClaimedListing, PushOutcome
from .models import MarketplaceConnection
from .services import record_attempt

log = logging.getLogger("commerce_api.marketplaces")

FIRST_CHECK_MS = {"patch": 300, "feed": 1000, "confirmed": 300}
MAX_CHECK_DELAY_MS = 60_000
CONFIRMED = "confirmed"  # a submission whose own result is known: only superseded writes
_RESULT = ("status", "answer", "error_code", "error_message")
_CHUNK = 500  # ids per IN (...) list
_SENT = ("sku", "status", "quantity", "price", "currency")

_CHECK_DUE = (
    "{Listing.sync_status} = 'submitted' AND {Listing.next_push_at} <= {p:now} AND "
    + lease_free("{Listing.lease_until}")
)
HAS_CHECK_DUE = DueProbe(Listing, _CHECK_DUE)
CHECK_CONNECTIONS = Statement(
    "SELECT DISTINCT {Listing.tenant}, {Listing.marketplace} FROM {Listing} WHERE " + _CHECK_DUE,
    Listing=Listing,
)
CHECK_LEASE = Lease(
    Listing,
    lease="lease_until",
    holder="lease_token",
    due=_CHECK_DUE
    + " AND {Listing.tenant} = {p:tenant} AND {Listing.marketplace} = {p:marketplace}",
    order="{Listing.next_push_at}",
    setting="{Listing.lease_until} = {p:until}, {Listing.lease_token} = {p:token}",
    claimable="{Listing.sync_status} = 'submitted'",
    returning=("id", "version"),
)
_RELEASED = CHECK_LEASE.released() + ", {Listing.pushing_version} = NULL"
_HELD = " WHERE {Listing.id} = {p:id} AND {Listing.lease_token} = {p:token}"
SUBMITTED = Statement(
    "UPDATE {Listing} SET {Listing.submission} = {p:submission}, {Listing.updated_at} = {p:now},"
    " {Listing.last_sync_error} = NULL, {Listing.push_failures} = 0, " + _RELEASED + ","
    " {Listing.next_push_at} = CASE WHEN {Listing.version} = {p:version} THEN {p:check_at}"
    " ELSE {p:next_push_at} END,"
    " {Listing.sync_status} = CASE WHEN {Listing.version} = {p:version} THEN 'submitted'"
    " ELSE 'pending' END" + _HELD,
    Listing=Listing,
)
# not processed yet (or not readable now): read again later, still submitted
LATER = Statement(
    "UPDATE {Listing} SET " + _RELEASED + ", {Listing.next_push_at} = {p:due}" + _HELD,
    Listing=Listing,
)
# the marketplace showed another quantity than the one we last set (Shopify's compare
# quantity): nothing was written there; the listing keeps what it shows as the quantity
# to compare with and is pushed again at once, from our state as it is then
MISMATCH = Statement(
    "UPDATE {Listing} SET {Listing.quantity} = {p:quantity},"
    " {Listing.external_refs} = COALESCE({p:external_refs}, {Listing.external_refs}),"
    " {Listing.updated_at} = {p:now}, " + _RELEASED + ", {Listing.next_push_at} = {p:now}" + _HELD,
    Listing=Listing,
)
# an earlier write may have landed over the newer one: pushed anew from the current state
REPUSH = Statement(
    "UPDATE {Listing} SET {Listing.submission} = NULL, {Listing.updated_at} = {p:now}, "
    + _RELEASED
    + ", {Listing.sync_status} = 'pending', {Listing.next_push_at} = {p:now}"
    + _HELD,
    Listing=Listing,
)
# a push answered at once, nothing unresolved: the old submission is history
CLEARED = Statement(
    "UPDATE {Listing} SET {Listing.submission} = NULL WHERE {Listing.id} = {p:id}"
    " AND {Listing.sync_status} IN ('in_sync', 'error') AND {Listing.lease_token} IS NULL",
    Listing=Listing,
)
SETTLED = Statement(
    "UPDATE {Listing} SET {Listing.submission} = NULL WHERE {Listing.id} = {p:id}"
    " AND {Listing.sync_status} <> 'submitted'",
    Listing=Listing,
)


@dataclass
class BatchOutcome:
    """The outcomes of one batch push or check (one unit of the connection's pushes in
    flight), with the notes of what the marketplace reported about nothing we sent."""

    connection: MarketplaceConnection
    outcomes: list
    check: bool = False
    notes: list = field(default_factory=list)


def outcome_of(item: ClaimedListing, started: int, result: ListingResult) -> PushOutcome:
    """A listing's push outcome from the marketplace's result for it."""
    return PushOutcome(
        item,
        started,
        result.status,
        result.answer,
        result.error_code,
        result.error_message,
        result.retry_after,
    )


# Finding work -----------------------------------------------------------------------------


def has_checks_due(now: int) -> bool:
    return HAS_CHECK_DUE(now)


def check_connections(now: int) -> list[tuple[str, str]]:
    return [(row[0], row[1]) for row in CHECK_CONNECTIONS.execute({"now": now}).fetchall()]


def claim_checks(
    tenant_id: str, marketplace: str, limit: int, lease_ms: int, token: str, now: int
) -> list[ClaimedListing]:
    """Lease up to ``limit`` submitted listings of one connection whose result is due;
    each carries its submission (``payload``: what was sent)."""
    if limit <= 0:
        return []
    with write_transaction():
        params = listing_push.connection_claim(tenant_id, marketplace, limit, lease_ms, token, now)
        rows = CHECK_LEASE.claim(params)
        if not rows:
            return []
        found = {
            row["id"]: row
            for row in Listing.select(
                Listing.id, Listing.submission, Product.sku, Product.id.alias("product_id")
            )
            .join(Product, on=(Product.id == Listing.product))
            .where(Listing.id.in_([row[0] for row in rows]))
            .dicts()
        }
    claimed = []
    for listing_id, version in rows:
        row = found[listing_id]
        submission = row["submission"] or {}
        item = ClaimedListing(
            listing_id,
            tenant_id,
            marketplace,
            int(submission.get("version", version)),
            token,
            row["product_id"],
            row["sku"],
            dict(submission.get("sent") or {"sku": row["sku"]}),
        )
        item.submission = submission
        claimed.append(item)
    return claimed


# Pushing and checking ---------------------------------------------------------------------


def push_batch(
    connection: MarketplaceConnection, items: list[ClaimedListing], slot_wait: float | None
) -> BatchOutcome:
    """Push claimed listings in one ``push_listings`` call; one outcome per listing."""
    started = now_ms()
    batch = [item.batch_item() for item in items]
    try:
        answer = call(
            connection,
            "push_listings",
            lambda connector: connector.push_listings(batch),
            resource_type="product",
            resource_id=items[0].product_id if len(items) == 1 else "batch",
            sku=items[0].sku if len(items) == 1 else None,
            created_by="listing_sync",
            details={"listings": len(items), "skus": [item.sku for item in items[:20]]},
            slot_wait=slot_wait,
        )
        results = answer.result
    except (MarketplaceRejection, MarketplaceUnavailable) as exc:
        status = "rejected" if isinstance(exc, MarketplaceRejection) else "unavailable"
        retry = getattr(exc, "retry_after", None)
        outcomes = [
            PushOutcome(item, started, status, None, exc.code, exc.message, retry) for item in items
        ]
        return BatchOutcome(connection, outcomes)
    outcomes = []
    for item, result in zip(items, results, strict=True):
        outcome = outcome_of(item, started, result)
        outcome.submission = result.submission
        outcomes.append(outcome)
    return BatchOutcome(connection, outcomes)


def check_batch(
    connection: MarketplaceConnection, items: list[ClaimedListing], slot_wait: float | None
) -> BatchOutcome:
    """Read the results of submitted listings, with the earlier writes each superseded;
    ``processing`` for those not done yet, ``repush`` where an earlier write landed."""
    started = now_ms()
    request, owners = [], []
    for index, item in enumerate(items):
        submission = item.submission or {}
        if submission.get("kind") != CONFIRMED:
            request.append({"sku": item.sku, "submission": submission})
            owners.append((index, False))
        for write in submission.get("superseded") or []:
            request.append({"sku": item.sku, "submission": write})
            owners.append((index, True))
    try:
        check: SubmissionCheck = (
            call(
                connection,
                "check_submissions",
                lambda connector: connector.check_submissions(request),
                slot_wait=slot_wait,
            ).result
            if request
            else SubmissionCheck([], [])
        )
    except (MarketplaceRejection, MarketplaceUnavailable) as exc:
        outcomes = [
            PushOutcome(item, started, "processing", None, exc.code, exc.message) for item in items
        ]
        return BatchOutcome(connection, outcomes, check=True)
    own, earlier = [None] * len(items), [[] for _ in items]
    for (index, superseded), result in zip(owners, check.results, strict=True):
        if superseded:
            earlier[index].append(result)
        else:
            own[index] = result
    outcomes = []
    for index, item in enumerate(items):
        result = own[index]
        if result is None:  # answered when pushed: only the earlier writes were read
            kept = item.submission or {}
            result = ListingResult(**{k: kept.get(k) for k in _RESULT})
        outcomes.append(combined(item, started, result, earlier[index]))
    return BatchOutcome(connection, outcomes, check=True, notes=check.notes)


def combined(
    item: ClaimedListing, started: int, result: ListingResult, earlier: list[ListingResult]
) -> PushOutcome:
    """A submitted listing's outcome from its own write's result and those of the earlier
    writes it superseded (the rule of issue 32, in this module's docstring)."""
    pending = ("submitted", "unavailable")
    waiting = [r for r in earlier if r.status in pending]
    landed = sum(1 for r in earlier if r.status == "accepted")
    # the listing's own write is waited for unless an earlier one landed and ours is
    # ordered (a patch: a newer patch is applied after it; the one that landed may be what
    # keeps ours from showing)
    if result.status in pending and not (landed and not own_unordered(item)):
        waiting.insert(0, result)
    if waiting:
        retry = max((r.retry_after or 0) for r in waiting) or None
        return PushOutcome(
            item, started, "processing", None, waiting[0].error_code, waiting[0].error_message,
            retry,
        )  # fmt: skip
    if landed:
        return PushOutcome(
            item,
            started,
            "repush",
            None,
            "LATE_WRITE",
            f"{landed} earlier write(s) of this listing were processed by the marketplace "
            "after it was pushed anew and may have overwritten the newer value; it is "
            "pushed again from the current state.",
        )
    return outcome_of(item, started, result)


def own_unordered(item: ClaimedListing) -> bool:
    submission = getattr(item, "submission", None) or {}
    return bool(submission.get("unordered")) and submission.get("kind") != CONFIRMED


def unresolved_writes(submission: dict | None) -> list[dict]:
    """The writes a listing's submission leaves unresolved that may still land over a newer
    one: those it superseded, and itself when the connector marked it ``unordered``."""
    if not submission:
        return []
    writes = list(submission.get("superseded") or [])
    if submission.get("unordered") and submission.get("kind") != CONFIRMED:
        writes.append({k: v for k, v in submission.items() if k != "superseded"})
    return writes


def _submissions(listing_ids):
    """``{listing id: submission}`` as the rows hold them now (under the caller's lease)."""
    ids, found = sorted(set(listing_ids)), {}
    for start in range(0, len(ids), _CHUNK):
        rows = Listing.select(Listing.id, Listing.submission).where(
            Listing.id.in_(ids[start : start + _CHUNK])
        )
        found.update((row.id, row.submission) for row in rows)
    return found


# Recording --------------------------------------------------------------------------------


def _check_delay(submission: dict, now: int) -> int:
    age = max(0, now - int(submission.get("at") or now))
    first = FIRST_CHECK_MS.get(submission.get("kind"), 1000)
    return int(min(MAX_CHECK_DELAY_MS, max(first, age / 4)))


@dataclass
class _Sorted:
    """``record``'s outcomes by what is written for them."""

    plain: list = field(default_factory=list)  # listing_push.record's
    submitted: list = field(default_factory=list)
    later: list = field(default_factory=list)
    checked: list = field(default_factory=list)  # listing ids whose check is settled
    notes: list = field(default_factory=list)  # (connection, note)
    mismatched: list = field(default_factory=list)  # (connection, outcome)
    repushed: list = field(default_factory=list)  # (connection, outcome)
    confirmed: list = field(default_factory=list)  # plain unless earlier writes are unresolved


def _sort_outcomes(items: list[Any]) -> _Sorted:
    found = _Sorted()
    by_status = {"submitted": found.submitted, "processing": found.later}
    for item in items:
        if not isinstance(item, BatchOutcome):
            (found.submitted if item.status == "submitted" else found.plain).append(item)
            continue
        found.notes += [(item.connection, note) for note in item.notes]
        for outcome in item.outcomes:
            if item.check:
                found.checked.append(outcome.listing.id)
            if outcome.status in by_status:
                by_status[outcome.status].append(outcome)
            elif outcome.status == "mismatch":
                found.mismatched.append((item.connection, outcome))
            elif outcome.status == "repush":
                found.repushed.append((item.connection, outcome))
            elif outcome.status in ("accepted", "rejected") and not item.check:
                found.confirmed.append(outcome)
            else:
                found.plain.append(outcome)
    return found


def _keep_unresolved(found: _Sorted, prior: dict) -> list[str]:
    """A confirmed outcome of a listing whose earlier writes are unresolved (issue 32)
    is kept in a new submission; the others are plain. The ids whose old submission is
    history now."""
    cleared = []
    for outcome in found.confirmed:
        if unresolved_writes(prior.get(outcome.listing.id)):
            outcome.submission = {
                "kind": CONFIRMED,
                **{k: getattr(outcome, k) for k in _RESULT},
                "sent": {k: outcome.listing.payload.get(k) for k in _SENT},
            }
            found.submitted.append(outcome)
        else:
            found.plain.append(outcome)
            if prior.get(outcome.listing.id):
                cleared.append(outcome.listing.id)
    return cleared


def record(items: list[Any], spacing_ms: int, now: int | None = None) -> int:
    """Record push outcomes and batch outcomes (inside the caller's transaction)."""
    now = now_ms() if now is None else now
    found = _sort_outcomes(items)
    # what each listing pushed anew left unresolved (issue 32): kept in its new submission
    prior = _submissions(o.listing.id for o in (*found.submitted, *found.confirmed))
    cleared = _keep_unresolved(found, prior)
    landed = listing_push.record(found.plain, spacing_ms, now) if found.plain else 0
    for listing_id in sorted(cleared):
        CLEARED.execute({"id": listing_id})
    landed += _record_submitted(found.submitted, prior, spacing_ms, now)
    for outcome in sorted(found.later, key=lambda o: o.listing.id):
        listing = outcome.listing
        delay = _check_delay(getattr(listing, "submission", None) or {}, now)
        if outcome.retry_after:
            delay = max(delay, int(float(outcome.retry_after) * 1000))
        cursor = LATER.execute({"due": now + delay, "id": listing.id, "token": listing.token})
        landed += cursor.rowcount or 0
    for connection, outcome in sorted(found.mismatched, key=lambda pair: pair[1].listing.id):
        landed += _record_mismatch(connection, outcome, now)
    for connection, outcome in sorted(found.repushed, key=lambda pair: pair[1].listing.id):
        landed += _record_repush(connection, outcome, now)
    for listing_id in sorted(set(found.checked)):
        SETTLED.execute({"id": listing_id})
    for connection, note in found.notes:
        _record_note(connection, note)
    return landed


def _record_submitted(submitted: list, prior: dict, spacing_ms: int, now: int) -> int:
    """The listings the marketplace only accepted for processing: submitted, with what
    they left unresolved (``superseded``, issue 32); returns how many were recorded."""
    landed = 0
    for outcome in sorted(submitted, key=lambda o: o.listing.id):
        listing = outcome.listing
        submission = {
            **(getattr(outcome, "submission", None) or {}),
            "at": now,
            "version": listing.version,
        }
        submission.setdefault("sent", {"sku": listing.sku})
        superseded = unresolved_writes(prior.get(listing.id))
        if superseded:
            submission["superseded"] = superseded
        cursor = SUBMITTED.execute(
            {
                "submission": json.dumps(submission, separators=(",", ":")),
                "now": now,
                "version": listing.version,
                "check_at": now + FIRST_CHECK_MS.get(submission.get("kind"), 1000),
                "next_push_at": max(now, outcome.started_at + spacing_ms),
                "id": listing.id,
                "token": listing.token,
            }
        )
        landed += cursor.rowcount or 0
    return landed


def _record_note(connection, note):
    """What a marketplace reported about nothing we sent: a visible sync-history row."""
    log.warning("%s reported about a listing it was not sent: %s", connection.marketplace, note)
    record_attempt(
        connection,
        resource_type="product",
        resource_id=f"feed:{note.get('feed_id')}"[:80],
        sku=note.get("sku"),
        operation="submission_report",
        status="rejected",
        error_code="UNKNOWN_MESSAGE",
        error_message=(
            f"The marketplace's report names {note.get('sku') or 'a message'} "
            f"(message {note.get('message_id')}), which this push did not send: "
            f"{note.get('code')}: {note.get('message')}"
        ),
        details=note,
        created_by="listing_sync",
    )


def _record_mismatch(connection, outcome, now):
    """A compare mismatch: the listing takes the marketplace's quantity as the one to
    compare with, is due again at once, and the sync history says what was found."""
    listing = outcome.listing
    answer = outcome.answer or {}
    found = answer.get("quantity")
    cursor = MISMATCH.execute(
        {
            "quantity": found
            if isinstance(found, int) and found >= 0
            else listing.last_quantity or 0,
            "external_refs": Listing.external_refs.db_value(answer.get("refs")),
            "now": now,
            "id": listing.id,
            "token": listing.token,
        }
    )
    if not cursor.rowcount:
        return 0
    record_attempt(
        connection,
        resource_type="product",
        resource_id=listing.product_id,
        sku=listing.sku,
        operation="compare_mismatch",
        status="rejected",
        error_code=outcome.error_code or "COMPARE_MISMATCH",
        error_message=outcome.error_message,
        details={
            "listing_id": listing.id,
            "version": listing.version,
            "expected": listing.last_quantity,
            "found": found,
            "desired": listing.payload.get("quantity"),
        },
        created_by="listing_sync",
    )
    return 1


def _record_repush(connection, outcome, now):
    """An earlier write landed after the listing was pushed anew: it is pushed again from
    the current state, and the sync history says why."""
    listing = outcome.listing
    cursor = REPUSH.execute({"now": now, "id": listing.id, "token": listing.token})
    if not cursor.rowcount:
        return 0
    submission = getattr(listing, "submission", None) or {}
    record_attempt(
        connection,
        resource_type="product",
        resource_id=listing.product_id,
        sku=listing.sku,
        operation="late_write",
        status="rejected",
        error_code=outcome.error_code,
        error_message=outcome.error_message,
        details={
            "listing_id": listing.id,
            "version": listing.version,
            "submission": {k: submission.get(k) for k in ("kind", "id", "sent")},
            "superseded": [
                {k: write.get(k) for k in ("kind", "id", "message_id", "version", "sent")}
                for write in submission.get("superseded") or []
            ],
        },
        created_by="listing_sync",
    )
    return 1
