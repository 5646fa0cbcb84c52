"""Listing prices: the one place that pushes a price or writes ``Listing.price``.

Two ways to change a listing's price, for the two kinds of caller:

- ``product_sync.update_listing`` (desired state, ``PATCH /api/products/:sku/listings/:m``):
  the listing takes the price and becomes ``pending``; the push service carries it.
- ``push_price`` then ``record_pushed_prices`` (a synchronous push, for an operation that
  must know the marketplace's answer: applying a recommendation, a repricing job with
  ``apply``): push through the gateway with no transaction open, then, in the caller's
  transaction, record the prices the marketplace accepted.
"""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..db import db
from ..products.models import Listing
from ..sql import Statement
from .gateway import Answer, call
from .listing_push import wire_body
from .models import MarketplaceConnection


def price_payload(
    product: dict[str, Any], listing: dict[str, Any], price: Decimal
) -> dict[str, Any]:
    """The ``push_product`` payload (docs/connector-http.md) with the new ``price``.

    ``product`` has the product's columns, ``listing`` its ``currency``. A price push
    carries no ``quantity`` (as a marketplace-fulfilled listing's push): the quantity it
    read may be stale by the time it lands, and would overwrite what a listing push sent
    meanwhile (seen in the soak, bench/soak.py); quantities are the push service's.
    """
    return wire_body(
        product,
        status=product["status"],
        price=price,
        currency=listing["currency"],
        quantity=None,
    )


def push_price(
    connection: MarketplaceConnection,
    listed: dict[str, Any],
    price: Decimal,
    *,
    idempotency_key: str | None = None,
    created_by: str | None = None,
    details: dict | None = None,
) -> Answer:
    """Push ``price`` for the listing of ``listed`` (a row with the product's columns and
    the listing's ``currency`` and ``quantity``) through the gateway, now.

    Recorded in the sync history as ``push_price`` (with ``details`` and the price).
    Raises the gateway's ``MarketplaceRejection`` / ``MarketplaceUnavailable``. Writes no
    listing: record an accepted price with ``record_pushed_prices``.
    """
    payload = price_payload(listed, listed, price)
    return call(
        connection,
        "push_price",
        lambda connector: connector.push_price(payload, idempotency_key=idempotency_key),
        resource_type="product",
        resource_id=listed["id"],
        sku=listed["sku"],
        created_by=created_by,
        details={**(details or {}), "price": payload["price"]},
    )


@dataclass(frozen=True)
class AcceptedPrice:
    """A price the marketplace accepted for a listing, at ``accepted_at`` (epoch ms);
    ``pushed_at``: when its first push began (None: not known, as after a crash)."""

    listing_id: str
    price: Decimal
    accepted_at: int
    pushed_at: int | None = None


# every right-hand side reads the row as it was before this UPDATE; "overtaken": the
# marketplace accepted a newer push than the one recorded (COALESCE(last_synced_at, 0) >= ?);
# a held listing (no price until now) has its price at last: its whole state is pushed
_RECORD = Statement(
    "UPDATE {L} SET {L.price} = {p:price}, {L.last_synced_at} = {p:accepted_at},"
    " {L.updated_at} = {p:accepted_at},"
    " {L.version} = {L.version} + 1, {L.price_version} = {L.price_version} + 1,"
    " {L.next_push_at} = CASE WHEN (COALESCE({L.last_synced_at}, 0) >= {p:since}"
    " AND {L.sync_status} <> 'pending') OR {L.sync_status} = 'held' THEN {p:accepted_at}"
    " ELSE {L.next_push_at} END,"
    " {L.sync_status} = CASE WHEN COALESCE({L.last_synced_at}, 0) >= {p:since}"
    " OR {L.sync_status} = 'held' THEN 'pending' ELSE {L.sync_status} END"
    " WHERE {L.id} = {p:id}",
    L=Listing,
)


def record_pushed_prices(accepted: list[AcceptedPrice]) -> int:
    """Inside the caller's transaction: each listing takes the price the marketplace
    accepted. Returns the listings changed.

    The listing's ``price_version`` is bumped (a price push computed from an older price
    is outdated), and its ``version``: a listing push that read the old price while this
    one was under way is recorded as outdated and pushed again (with this price), so the
    marketplace never keeps an older price than the listing shows. A listing push already
    recorded since the price's first push began may have reached the marketplace after
    the price did, carrying the old one: the listing becomes pending and is pushed again
    (with an unknown ``pushed_at``, always).
    """
    if db.transaction_depth() == 0:
        raise RuntimeError("record_pushed_prices() must run inside the caller's transaction")
    if not accepted:
        return 0
    to_db = Listing.price.db_value
    ordered = sorted(accepted, key=lambda a: a.listing_id)  # the listings' lock order
    rows = []
    for a in ordered:
        since = 0 if a.pushed_at is None else a.pushed_at
        rows.append(
            {
                "price": to_db(a.price),
                "accepted_at": a.accepted_at,
                "since": since,
                "id": a.listing_id,
            }
        )
    _RECORD.executemany(rows)
    return len(accepted)
