"""Repricing: ``POST /api/pricing/recalculate`` and the ``pricing_recalculate`` job.

The job works in chunks of SKUs (``COMMERCE_PRICING_CHUNK_SIZE``, default 500). Each chunk
issues the same statements whatever its size: one read of the listings, one of the latest
offers, at most one competitor fetch (two bulk writes), then one transaction that
dismisses the superseded pending recommendations and inserts the new ones and their events.
With ``apply``, each recommendation is then claimed, pushed and recorded on its own
(``applying.py``): the marketplace takes prices one SKU at a time, and a push is written
down before (the claim) and after (the outcome), so a killed worker leaves nothing unknown.
"""

import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ..config import current_config
from ..db import write_transaction
from ..errors import ApiError, validation_error
from ..events.outbox import event_params, write_events
from ..ids import new_id
from ..jobs.models import Job
from ..jobs.services import dispatch_job
from ..marketplaces.services import connected_marketplaces, connection_for
from ..products.models import Listing, Product
from ..sql import Statement, insert_rows
from ..timeutil import now_ms, parse_timestamp
from .applying import PriceApplier, StillUnavailable
from .competitors import FetchFailed, fetch_offers, latest_offers, needs_fetch, store_offers
from .engine import MinChange, RuleSet, compute_price
from .models import Recommendation
from .recommendations import listed_products, serialize_recommendation
from .rules import active_rules
from .schemas import MAX_RECALCULATE_SKUS
from .types import Offer, PriceInput

MAX_SKIPPED_SHOWN = 100


class JobProblem(Exception):
    """The job cannot run, or not now (the handler turns it into a JobFailed)."""

    def __init__(self, code, message, details=None, retryable=False):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
        self.retryable = retryable


# The request ----------------------------------------------------------------------------


def listed_skus(tenant_id: str, marketplace: str, limit: int | None = None) -> list[str]:
    query = (
        Product.select(Product.sku)
        .join(Listing, on=(Listing.product == Product.id))
        .where((Product.tenant == tenant_id) & (Listing.marketplace == marketplace))
        .order_by(Product.sku)
    )
    if limit is not None:
        query = query.limit(limit)
    return [sku for (sku,) in query.tuples()]


def _require_connected(tenant_id, marketplace):
    connected = connected_marketplaces(tenant_id)
    if marketplace not in connected:
        raise ApiError(
            "MARKETPLACE_NOT_CONNECTED",
            f"The marketplace {marketplace} is not connected for this tenant.",
            details={"field": "marketplace", "marketplace": marketplace, "connected": connected},
        )


def request_recalculation(tenant_id: str, data: dict[str, Any], created_by: str) -> dict[str, Any]:
    """Queue a ``pricing_recalculate`` job; returns SPEC's ``{job_id, status, sku_count,
    estimated_completion_seconds}``."""
    marketplace = data["marketplace"]
    _require_connected(tenant_id, marketplace)
    params = {"marketplace": marketplace, "apply": bool(data.get("apply"))}
    if data.get("skus") is not None:
        skus = list(dict.fromkeys(data["skus"]))
        params["skus"] = skus
        sku_count = len(skus)
    else:
        listed = len(listed_skus(tenant_id, marketplace, limit=MAX_RECALCULATE_SKUS + 1))
        if listed > MAX_RECALCULATE_SKUS:
            raise validation_error(
                {
                    "skus": [
                        f"More than {MAX_RECALCULATE_SKUS:,} SKUs are listed on {marketplace}: "
                        f"name at most {MAX_RECALCULATE_SKUS:,} in skus."
                    ]
                }
            )
        sku_count = listed
    job = dispatch_job(
        tenant_id, {"type": "pricing_recalculate", "params": params}, created_by=created_by
    )
    wait_ms = parse_timestamp(job["estimated_completion_at"]) - parse_timestamp(job["created_at"])
    return {
        "job_id": job["id"],
        "status": job["status"],
        "sku_count": sku_count,
        "estimated_completion_seconds": max(1, math.ceil(wait_ms / 1000)),
    }


# The job --------------------------------------------------------------------------------


_DISMISS_PENDING = Statement(
    "UPDATE {R} SET {R.status} = {p:dismissed}, {R.dismissed_at} = {p:now},"
    " {R.updated_at} = {p:now} WHERE {R.tenant_id} = {p:tenant}"
    " AND {R.marketplace} = {p:marketplace} AND {R.status} = {p:pending}"
    " AND {R.sku} IN ({in:skus})",
    R=Recommendation,
)


def _dismiss_pending(tenant_id: str, marketplace: str, skus: list[str], now: int) -> None:
    """One UPDATE (as plain SQL: peewee would take ~30 ms to compose 500 values)."""
    _DISMISS_PENDING.execute(
        {
            "dismissed": "dismissed",
            "now": now,
            "tenant": tenant_id,
            "marketplace": marketplace,
            "pending": "pending",
            "skus": skus,
        }
    )


def _merge_offers(stored, fetched):
    """The latest offer per competitor from what was stored and what was just fetched."""
    by_competitor = {offer.competitor: offer for offer in stored or ()}
    for offer in fetched:
        kept = by_competitor.get(offer.competitor)
        if kept is None or offer.observed_at >= kept.observed_at:
            by_competitor[offer.competitor] = offer
    return list(by_competitor.values())


def _as_offer(record):
    return Offer(
        competitor=record["competitor"],
        price=record["price"],
        shipping=record["shipping"],
        landed_price=record["landed_price"],
        is_buy_box_winner=record["is_buy_box_winner"],
        condition=record["condition"],
        observed_at=record["observed_at"],
    )


class Recalculation:
    """One run of the ``pricing_recalculate`` job over a list of SKUs."""

    def __init__(
        self, tenant_id, marketplace, skus, apply, job_id=None, progress=None, heartbeat=None
    ):
        self.tenant_id = tenant_id
        self.marketplace = marketplace
        self.skus = skus
        self.apply = apply
        self.job_id = job_id
        self.progress = progress
        self.heartbeat = heartbeat  # raises when the worker no longer holds the job
        config = current_config()
        self.chunk_size = max(1, int(config["PRICING_CHUNK_SIZE"]))
        self.max_age = int(config["COMPETITOR_MAX_AGE_SECONDS"])
        try:
            self.min_change = MinChange.parse(config["PRICING_MIN_CHANGE"])
        except ValueError as error:
            raise JobProblem("INVALID_CONFIGURATION", f"COMMERCE_{error}.") from None
        self.connection = connection_for(tenant_id, marketplace)
        if self.connection is None:
            raise JobProblem(
                "MARKETPLACE_NOT_CONNECTED",
                f"The marketplace {marketplace} is not connected for this tenant.",
                {"marketplace": marketplace},
            )
        self.rules = RuleSet(active_rules(tenant_id, marketplace))
        self.created_by = f"job:{job_id}" if job_id else None
        self.written = []  # result items
        self.skipped = []
        self.skipped_count = 0
        self.updated_count = 0
        self.fetch = {"skus_requested": 0, "offers_stored": 0, "error": None}
        self.applier = None
        if apply:
            self.applier = PriceApplier(
                tenant_id, marketplace, self.connection, job_id, self.created_by, heartbeat
            )

    # one chunk ----------------------------------------------------------------------

    def _skip(self, sku, reason):
        self.skipped_count += 1
        if len(self.skipped) < MAX_SKIPPED_SHOWN:
            self.skipped.append({"sku": sku, "reason": reason})

    def _offers(self, skus, now):
        """``{sku: [Offer]}``, fetching through the connector the SKUs without fresh ones."""
        offers = latest_offers(self.tenant_id, self.marketplace, skus)
        missing = [sku for sku in skus if needs_fetch(offers.get(sku), now, self.max_age)]
        if not missing or self.fetch["error"] is not None:
            return offers
        self.fetch["skus_requested"] += len(missing)
        try:
            records = fetch_offers(self.connection, missing)
        except FetchFailed as failure:
            # reprice with what is stored (stale offers are ignored by the engine, and a
            # competitor rule without fresh offers is passed over); don't ask again
            self.fetch["error"] = {"code": failure.code, "message": failure.message}
            return offers
        self.fetch["offers_stored"] += store_offers(self.tenant_id, records)
        fetched = {}
        for record in records:
            fetched.setdefault(record["sku"], []).append(_as_offer(record))
        for sku, new in fetched.items():
            offers[sku] = _merge_offers(offers.get(sku), new)
        return offers

    def _compute(self, skus, listed, offers, now):
        results = []
        for sku in skus:
            row = listed.get(sku)
            if row is None:
                self._skip(sku, "not_listed")
                continue
            if row["status"] == "archived":
                self._skip(sku, "archived")
                continue
            if row["listing_price"] is None:
                self._skip(sku, "no_listing_price")
                continue
            inp = PriceInput(
                sku=sku,
                marketplace=self.marketplace,
                category=row["category"],
                current_price=Decimal(row["listing_price"]),
                cost_price=None if row["cost_price"] is None else Decimal(row["cost_price"]),
                offers=tuple(offers.get(sku, ())),
                now=now,
                max_offer_age_seconds=self.max_age,
            )
            results.append((row, compute_price(inp, self.rules)))
        return results

    def _write(self, computed, now):
        """Dismiss and insert in one transaction per chunk; with apply, then push each
        recommendation (claimed, pushed, recorded: ``applying.PriceApplier``)."""
        changed = [
            (row, r)
            for row, r in computed
            if self.min_change.allows(r.current_price, r.recommended_price)
        ]
        records = [self._recommendation(row, result, now) for row, result in changed]
        events = [
            event_params(
                self.tenant_id,
                "pricing.recommendation.created",
                "recommendation",
                record["id"],
                serialize_recommendation(record),
                created_at=now,
            )
            for record in records
        ]
        items = [
            _written_item(record, row, result)
            for (row, result), record in zip(changed, records, strict=True)
        ]
        with write_transaction():
            # a recalculation supersedes every pending recommendation of the SKUs it priced
            _dismiss_pending(self.tenant_id, self.marketplace, [r["sku"] for r, _ in computed], now)
            insert_rows(Recommendation, records)
            write_events(events)
        self.updated_count += len(records)
        self.written.extend(items)
        if self.applier is None:
            return
        for (row, _), record, item in zip(changed, records, items, strict=True):
            error = self.applier.apply(record, row)
            if error is None:
                item["applied"] = True
            else:
                item["error"] = error

    def _recommendation(self, row, result, now):
        """The pending recommendation row of one priced SKU."""
        return {
            "id": new_id("recommendation"),
            "tenant": self.tenant_id,
            "job_id": self.job_id,
            "sku": row["sku"],
            "marketplace": self.marketplace,
            "current_price": result.current_price,
            "recommended_price": result.recommended_price,
            "delta": result.delta,
            "delta_pct": result.delta_pct,
            "buy_box_win_probability": result.buy_box_win_probability,
            "estimated_margin": result.estimated_margin,
            "confidence": result.confidence,
            "reasoning": result.reasoning,
            "rule_ids": list(result.rule_ids),
            "reference_price": result.reference_price,
            # the price it was computed from: pushing it after a newer one is dropped
            "listing_price_version": row["listing_price_version"],
            "status": "pending",
            "created_at": now,
            "updated_at": now,
            "applied_at": None,
            "dismissed_at": None,
        }

    def _chunk(self, skus):
        now = now_ms()
        listed = listed_products(self.tenant_id, self.marketplace, skus)
        offers = self._offers([sku for sku in skus if sku in listed], now)
        computed = self._compute(skus, listed, offers, now)
        if computed:
            self._write(computed, now)

    # the run --------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        total = len(self.skus)
        if self.applier is not None:
            self.applier.resume()  # what a killed attempt of this job left half done
        for start in range(0, total, self.chunk_size):
            self._chunk(self.skus[start : start + self.chunk_size])
            if self.progress is not None:
                self.progress(min(start + self.chunk_size, total), total)
        return {
            "marketplace": self.marketplace,
            "processed_count": total,
            "updated_count": self.updated_count,
            "applied_count": self.applier.applied_count if self.applier else 0,
            "recommendations": self.written,
            "skipped_count": self.skipped_count,
            "skipped": self.skipped,
            "competitor_fetch": self.fetch,
            **({"resumed_count": self.applier.resumed_count} if self.applier else {}),
        }


def run_recalculation(
    job: Job,
    progress: Callable[[int, int], None] | None = None,
    heartbeat: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The ``pricing_recalculate`` job's work; returns SPEC's result (and more)."""
    params = job.params or {}
    marketplace = params.get("marketplace")
    if not isinstance(marketplace, str) or not marketplace:
        raise JobProblem("VALIDATION_ERROR", "The job has no marketplace.")
    if params.get("skus") is not None:
        skus = list(dict.fromkeys(params["skus"]))[:MAX_RECALCULATE_SKUS]
    else:
        skus = listed_skus(job.tenant_id, marketplace, limit=MAX_RECALCULATE_SKUS)
    run = Recalculation(
        job.tenant_id,
        marketplace,
        skus,
        bool(params.get("apply")),
        job_id=job.id,
        progress=progress,
        heartbeat=heartbeat,
    )
    try:
        return run.run()
    except StillUnavailable as stuck:
        # the claims stay: the retried attempt pushes them again before anything else
        raise JobProblem(
            stuck.error.code, stuck.error.message, stuck.error.details, retryable=True
        ) from None


def _written_item(record, row, result):
    """The job result's entry of a recommendation written (``applied`` set by apply)."""
    return {
        "id": record["id"],
        "sku": row["sku"],
        "current_price": float(result.current_price),
        "recommended_price": float(result.recommended_price),
        "confidence": result.confidence,
        "applied": False,
        "reasoning": result.reasoning,
    }
