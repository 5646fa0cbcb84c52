"""The ``review_sentiment`` job's work: gather reviews (from the tenant's marketplaces or
inline), keep and score the new ones, and sum them up.

Progress counts steps: one per marketplace request (``SKU_CHUNK`` SKUs each), then one per
chunk of ``reviews.CHUNK`` reviews looked up and scored; the total grows once the number of
reviews is known.
"""

import math
from datetime import datetime
from typing import Any

from ..jobs.errors import JobFailed
from ..jobs.runtime import JobContext
from ..marketplaces import gateway
from ..marketplaces.base import MarketplaceRejection, MarketplaceUnavailable
from ..marketplaces.models import MarketplaceConnection
from ..products.models import Product
from .reviews import CHUNK, INLINE_SOURCE, inline_id, store_reviews, summarize

SKU_CHUNK = 100  # SKUs per fetch_reviews request
RESULT_LIMIT = 10_000  # reviews listed in the result (every review counts in the figures)


class Steps:
    """``ctx.progress`` in steps whose total may grow."""

    def __init__(self, ctx, total):
        self.ctx, self.done, self.total = ctx, 0, total

    def grow(self, more: int) -> None:
        self.total += more

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.ctx is not None:
            self.ctx.progress(self.done, max(self.total, self.done))


def to_ms(value: str | datetime | None) -> int | None:
    """Milliseconds of an ISO 8601 string or aware datetime, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if value.tzinfo is None:
        return None
    return int(value.timestamp() * 1000)


def _connections(tenant_id, marketplace):
    query = MarketplaceConnection.select().where(
        (MarketplaceConnection.tenant == tenant_id) & (MarketplaceConnection.status == "active")
    )
    if marketplace:
        query = query.where(MarketplaceConnection.marketplace == marketplace)
    connections = list(query.order_by(MarketplaceConnection.marketplace))
    if not connections:
        where = f"Marketplace {marketplace!r} is" if marketplace else "No marketplace is"
        raise JobFailed(
            "MARKETPLACE_NOT_CONNECTED",
            f"{where} connected for this tenant; connect one or pass reviews inline.",
            details={"marketplace": marketplace} if marketplace else {},
        )
    return connections


def _catalogue_skus(tenant_id):
    return [
        sku
        for (sku,) in Product.select(Product.sku)
        .where((Product.tenant == tenant_id) & (Product.status != "archived"))
        .order_by(Product.sku)
        .tuples()
    ]


def _fetch(connection, skus, since, steps):
    """Every review the connection has for ``skus``; a failure ends the job."""
    wanted, out = set(skus), []
    for start in range(0, len(skus), SKU_CHUNK):
        chunk = skus[start : start + SKU_CHUNK]
        details = {"marketplace": connection.marketplace}
        try:
            items = gateway.call(
                connection,
                "fetch_reviews",
                lambda connector, skus=chunk: connector.fetch_reviews(skus, since),
            ).result
        except MarketplaceUnavailable as exc:
            details.update(marketplace_code=exc.code, marketplace_message=exc.message)
            raise JobFailed(
                "MARKETPLACE_UNAVAILABLE",
                f"{connection.marketplace} could not be reached for reviews; the job will be "
                "tried again.",
                retryable=True,
                details=details,
            ) from None
        except MarketplaceRejection as exc:
            details.update(marketplace_code=exc.code, marketplace_message=exc.message)
            raise JobFailed(
                "MARKETPLACE_REJECTION",
                f"{connection.marketplace} refused the reviews request: {exc.message}",
                details=details,
            ) from None
        # a marketplace answering about SKUs it was not asked about is not believed
        out.extend(item for item in items if item["sku"] in wanted)
        steps.advance()
    return out


def _from_wire(item):
    return {
        "external_id": item["id"],
        "sku": item["sku"],
        "rating": item.get("rating"),
        "title": item.get("title"),
        "text": item["text"],
        "reviewed_at": to_ms(item.get("created_at")),
    }


def _from_inline(item):
    return {
        "external_id": inline_id(item),
        "sku": item["sku"],
        "rating": item.get("rating"),
        "title": item.get("title"),
        "text": item["text"],
        "reviewed_at": None,
    }


def run_review_sentiment(
    tenant_id: str, params: dict[str, Any], ctx: JobContext | None = None
) -> dict[str, Any]:
    """The ``review_sentiment`` result for ``params`` as stored at dispatch."""
    since = params.get("since")
    since = datetime.fromisoformat(since) if isinstance(since, str) else since
    batches = []  # (source, reviews)
    skipped = 0
    if params.get("reviews") is not None:
        steps = Steps(ctx, 0)
        batches.append((INLINE_SOURCE, [_from_inline(item) for item in params["reviews"]]))
    else:
        connections = _connections(tenant_id, params.get("marketplace"))
        skus = list(dict.fromkeys(params.get("skus") or _catalogue_skus(tenant_id)))
        steps = Steps(ctx, len(connections) * math.ceil(len(skus) / SKU_CHUNK))
        for connection in connections:
            fetched = _fetch(connection, skus, since, steps) if skus else []
            kept = [_from_wire(item) for item in fetched if item["text"].strip()]
            skipped += len(fetched) - len(kept)
            batches.append((connection.marketplace, kept))
    steps.grow(sum(math.ceil(len(items) / CHUNK) for _, items in batches))
    scored, new_count = [], 0
    for source, items in batches:
        base = steps.done

        def progress(done, base=base):
            steps.advance(base + math.ceil(done / CHUNK) - steps.done)

        got, new = store_reviews(tenant_id, source, items, progress)
        scored.extend(got)
        new_count += new
    scored.sort(key=lambda r: (-(r.get("reviewed_at") or 0), r["sku"], r["external_id"]))
    result = summarize(scored, RESULT_LIMIT)
    result["new_review_count"] = new_count
    result["skipped_count"] = skipped
    result["sources"] = [source for source, _ in batches]
    return result
