"""The pricing values the engine, the probability model and the services share: rules,
competitor offers, the engine's input and its result. Plain frozen dataclasses, no
behaviour (as saleor's ``interface.py``)."""

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    type: str  # floor | ceiling | competitor_match | buy_box_target | margin_target
    value: Decimal
    value_type: str  # fixed | percent
    applies_to: str  # all | category | sku
    category: str | None
    skus: frozenset  # of str; empty unless applies_to == "sku"
    marketplace: str  # a marketplace id or "all"
    priority: int  # 0-1000, higher wins
    created_at: int  # epoch ms; older wins a full tie
    is_active: bool = True


@dataclass(frozen=True)
class Offer:
    competitor: str
    price: Decimal
    shipping: Decimal
    landed_price: Decimal
    is_buy_box_winner: bool
    condition: str  # "new", "used", ...
    observed_at: int  # epoch ms


@dataclass(frozen=True)
class PriceInput:
    sku: str
    marketplace: str
    category: str | None
    current_price: Decimal  # P, the listing's price
    cost_price: Decimal | None  # C
    offers: tuple  # of Offer: the latest offer per competitor (stale and used ones dropped here)
    now: int  # epoch ms
    max_offer_age_seconds: int = 86400


@dataclass(frozen=True)
class PriceResult:
    sku: str
    marketplace: str
    current_price: Decimal  # P, 2 places
    recommended_price: Decimal  # R, 2 places, >= 0.01
    delta: Decimal  # R - P, 2 places
    delta_pct: Decimal  # 100 * delta / P, 2 places; 0.00 when P is 0 (see reasoning)
    buy_box_win_probability: float  # [0, 1]
    estimated_margin: Decimal | None  # (R - C) / R, 4 places; None without cost
    confidence: float  # [0, 1]
    reasoning: str
    rule_ids: tuple  # ids of the rules that decided (target, floor, ceiling)
    reference_price: Decimal | None  # L or W when a competitor/buy-box rule decided
    offers_used: int  # fresh "new" offers considered
