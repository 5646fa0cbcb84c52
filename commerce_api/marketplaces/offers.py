"""Checking the competitor offers a marketplace answers, before anything stores them.

A connector's ``fetch_competitor_prices`` returns records ``{sku, marketplace, competitor,
price, shipping, landed_price, currency, is_buy_box_winner, condition, observed_at}``. An
answer with a record that is not one (a wrong type, NaN, an infinity, a negative or absurd
price, a landed price that is not price + shipping, a time that is not a time or lies in
the future) is not a usable answer: the marketplace counts as unavailable and nothing of
that answer is kept. Records for SKUs that were not asked for are dropped.
"""

import math
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from ..timeutil import now_ms, parse_timestamp
from .base import MarketplaceUnavailable

CENT = Decimal("0.01")
MAX_PRICE = Decimal("1000000")  # above this an offer is not a real offer
MAX_FUTURE_MS = 5 * 60_000  # clocks drift; an observation further ahead is invalid
MAX_AGE_MS = 366 * 86_400_000
MAX_RECORDS_PER_SKU = 100


def _invalid(index, field, problem):
    return MarketplaceUnavailable(
        f"Competitor record {index}: {field} {problem}.",
        code="INVALID_RESPONSE",
        details={"index": index, "field": field},
    )


def _money(item, index, field, required=True):
    value = item.get(field)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        raise _invalid(index, field, "is not a number")
    if isinstance(value, str):
        raise _invalid(index, field, "is a string, not a JSON number")
    if isinstance(value, float) and not math.isfinite(value):
        raise _invalid(index, field, "is not finite")
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise _invalid(index, field, "is not a number") from None
    if not number.is_finite() or number < 0 or number > MAX_PRICE:
        raise _invalid(index, field, f"is outside 0 to {MAX_PRICE}")
    return number.quantize(CENT, rounding=ROUND_HALF_UP)


def _text(item, index, field, max_length, default=None):
    value = item.get(field, default)
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        raise _invalid(index, field, f"is not a string of 1 to {max_length} characters")
    if "\x00" in value or not value.isprintable():  # no database stores NUL
        raise _invalid(index, field, "holds control characters")
    return value.strip()


def normalize_offer(item: Any, index: int, now: int) -> dict[str, Any]:
    """One record checked and typed: Decimal money, epoch-ms ``observed_at``."""
    if not isinstance(item, dict):
        raise _invalid(index, "record", "is not an object")
    sku = _text(item, index, "sku", 64)
    competitor = _text(item, index, "competitor", 200)
    price = _money(item, index, "price")
    if price <= 0:
        raise _invalid(index, "price", "is not above 0")
    shipping = _money(item, index, "shipping", required=False) or Decimal("0.00")
    landed = _money(item, index, "landed_price", required=False)
    if landed is None:
        landed = price + shipping
    elif abs(landed - (price + shipping)) > CENT:
        raise _invalid(index, "landed_price", "is not price + shipping")
    currency = _text(item, index, "currency", 3, default="USD")
    if len(currency) != 3 or not currency.isalpha():
        raise _invalid(index, "currency", "is not a three-letter code")
    winner = item.get("is_buy_box_winner", False)
    if not isinstance(winner, bool):
        raise _invalid(index, "is_buy_box_winner", "is not a boolean")
    condition = _text(item, index, "condition", 32, default="new").lower()
    observed = item.get("observed_at")
    if not isinstance(observed, str):
        raise _invalid(index, "observed_at", "is not an ISO 8601 timestamp")
    try:
        observed_ms = parse_timestamp(observed)
    except (ValueError, OverflowError):
        raise _invalid(index, "observed_at", "is not an ISO 8601 timestamp") from None
    if observed_ms > now + MAX_FUTURE_MS or observed_ms < now - MAX_AGE_MS:
        raise _invalid(index, "observed_at", "is in the future or more than a year old")
    return {
        "sku": sku,
        "competitor": competitor,
        "price": price,
        "shipping": shipping,
        "landed_price": landed,
        "currency": currency.upper(),
        "is_buy_box_winner": winner,
        "condition": condition,
        "observed_at": observed_ms,
    }


def normalize_offers(
    items: Any, skus: Iterable[str], marketplace: str, now: int | None = None
) -> list[dict[str, Any]]:
    """Check every record of an answer; return the typed ones for the SKUs asked for.

    Raises ``MarketplaceUnavailable`` (``INVALID_RESPONSE``) when any record is not valid:
    the whole answer is refused, so a half-checked answer is never stored.
    """
    if not isinstance(items, list):
        raise MarketplaceUnavailable("The answer has no prices list.", code="INVALID_RESPONSE")
    now = now_ms() if now is None else now
    wanted = set(skus)
    records, per_sku = [], {}
    for index, item in enumerate(items):
        record = normalize_offer(item, index, now)
        if record["sku"] not in wanted:
            continue
        per_sku[record["sku"]] = per_sku.get(record["sku"], 0) + 1
        if per_sku[record["sku"]] > MAX_RECORDS_PER_SKU:
            raise _invalid(index, "sku", f"has more than {MAX_RECORDS_PER_SKU} offers")
        records.append({**record, "marketplace": marketplace})
    return records
