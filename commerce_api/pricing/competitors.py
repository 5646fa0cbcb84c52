"""Competitor offers: fetch through the connector, store (history + latest), read, list, scan."""

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..db import write_transaction
from ..ids import new_id
from ..marketplaces import gateway
from ..marketplaces.base import ConnectorError, MarketplaceRejection
from ..marketplaces.models import MarketplaceConnection
from ..marketplaces.services import connection_for
from ..pagination import filter_equal, paginate_args
from ..shapes import compile_serializer
from ..sql import PreparedIn, insert_rows
from ..timeutil import now_ms
from .models import CompetitorLatest, CompetitorOffer
from .shapes import CompetitorPriceSchema
from .types import Offer

OFFER_COLUMNS = (
    "marketplace",
    "sku",
    "competitor",
    "price",
    "shipping",
    "landed_price",
    "currency",
    "is_buy_box_winner",
    "condition",
    "observed_at",
)


serialize_offer = compile_serializer(CompetitorPriceSchema)


# Fetching -------------------------------------------------------------------------------


class FetchFailed(Exception):
    """The marketplace gave no usable competitor answer (the job decides what follows)."""

    def __init__(self, code, message, retryable, retry_after=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable  # unavailable (try later), not a refusal
        self.retry_after = retry_after


def fetch_offers(connection: MarketplaceConnection, skus: Iterable[str]) -> list[dict[str, Any]]:
    """Ask the connector for the offers of ``skus`` (no transaction may be open).

    Returns the checked records; raises FetchFailed when the marketplace is unavailable,
    refuses, or answers something that is not the contract (nothing of it is kept).
    """
    try:
        return gateway.call(
            connection,
            "fetch_competitor_prices",
            lambda connector: connector.fetch_competitor_prices(list(skus)),
        ).result
    except MarketplaceRejection as exc:
        raise FetchFailed(exc.code or "REJECTED", exc.message, retryable=False) from None
    except ConnectorError as exc:  # unavailable, or a failure we do not know
        raise FetchFailed(
            exc.code or "UNAVAILABLE",
            exc.message,
            retryable=True,
            retry_after=getattr(exc, "retry_after", None),
        ) from None


def scan_competitors(
    tenant_id: str,
    marketplace: str,
    skus: Sequence[str],
    chunk_size: int,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Fetch and store the offers of ``skus`` chunk by chunk (the ``competitor_scan`` job).

    Returns ``{sku_count, offer_count, skus_without_offers}``; raises FetchFailed when a
    chunk gets no usable answer (the chunks before it stay stored).
    """
    connection = connection_for(tenant_id, marketplace)
    if connection is None:
        raise FetchFailed(
            "MARKETPLACE_NOT_CONNECTED",
            f"The marketplace {marketplace} is not connected for this tenant.",
            retryable=False,
        )
    offer_count, with_offers = 0, set()
    for start in range(0, len(skus), chunk_size):
        chunk = skus[start : start + chunk_size]
        records = fetch_offers(connection, chunk)
        offer_count += store_offers(tenant_id, records)
        with_offers.update(record["sku"] for record in records)
        if progress is not None:
            progress(min(start + chunk_size, len(skus)), len(skus))
    return {
        "marketplace": marketplace,
        "sku_count": len(skus),
        "offer_count": offer_count,
        "skus_without_offers": [sku for sku in skus if sku not in with_offers],
    }


# Storing --------------------------------------------------------------------------------


def _latest_per_competitor(rows):
    """One row per (sku, competitor): the latest observation (an upsert statement may
    touch a row only once)."""
    latest = {}
    for row in rows:
        key = (row["sku"], row["competitor"])
        kept = latest.get(key)
        if kept is None or row["observed_at"] >= kept["observed_at"]:
            latest[key] = row
    return list(latest.values())


def store_offers(tenant_id: str, records: Sequence[dict[str, Any]], now: int | None = None) -> int:
    """Write ``records`` to the history and the latest table: two statements in all.

    Runs inside the caller's transaction when there is one. A record older than the one
    already kept for its competitor goes to the history only.
    """
    if not records:
        return 0
    now = now_ms() if now is None else now
    rows = [
        {
            "id": new_id("competitor_price"),
            "tenant": tenant_id,
            **{name: record[name] for name in OFFER_COLUMNS},
            "created_at": now,
        }
        for record in records
    ]
    with write_transaction():
        insert_rows(CompetitorOffer, rows)
        insert_rows(
            CompetitorLatest,
            _latest_per_competitor(rows),
            upsert_keys=("tenant", "marketplace", "sku", "competitor"),
            newer_column="observed_at",
        )
    return len(rows)


# Reading --------------------------------------------------------------------------------


_money = CompetitorLatest.price.python_value
_latest = PreparedIn(
    lambda tenant_id, marketplace, skus: CompetitorLatest.select(
        CompetitorLatest.sku,
        CompetitorLatest.competitor,
        CompetitorLatest.price,
        CompetitorLatest.shipping,
        CompetitorLatest.landed_price,
        CompetitorLatest.is_buy_box_winner,
        CompetitorLatest.condition,
        CompetitorLatest.observed_at,
    ).where(
        (CompetitorLatest.tenant == tenant_id)
        & (CompetitorLatest.marketplace == marketplace)
        & CompetitorLatest.sku.in_(skus)
    ),
    2,
)


def latest_offers(tenant_id: str, marketplace: str, skus: Sequence[str]) -> dict[str, list[Offer]]:
    """``{sku: [engine Offer]}``: the latest record of each competitor, one query."""
    by_sku = {}
    money = _money
    for sku, competitor, price, shipping, landed, winner, condition, observed in _latest.tuples(
        tenant_id, marketplace, values=skus
    ):
        by_sku.setdefault(sku, []).append(
            Offer(
                competitor=competitor,
                price=money(price),
                shipping=money(shipping),
                landed_price=money(landed),
                is_buy_box_winner=bool(winner),
                condition=condition,
                observed_at=observed,
            )
        )
    return by_sku


def needs_fetch(offers: Iterable[Offer] | None, now: int, max_age_seconds: float) -> bool:
    """True when a SKU has no fresh offer (missing, or every record stale)."""
    limit = now - max_age_seconds * 1000
    return not any(offer.observed_at >= limit for offer in offers or ())


def list_competitor_prices(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    query = CompetitorLatest.select().where(CompetitorLatest.tenant == tenant_id).dicts()
    query = filter_equal(query, CompetitorLatest, args, ("sku", "marketplace"))
    rows, meta = paginate_args(
        query,
        args,
        sort_field=CompetitorLatest.observed_at,
        tiebreak=CompetitorLatest.id,
        kind="competitor_prices",
        scope=[tenant_id, args.get("sku"), args.get("marketplace")],
    )
    return [serialize_offer(row) for row in rows], meta
