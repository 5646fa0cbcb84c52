"""The desired-state rule in one place: every write that changes what a listing should show
goes through here, and marks the listings ``pending`` in the same transaction (issue 37).

A listing's desired state follows its product's content and status, its stock, a bundle's
components, and the listing's own settings (price, allocation, status). Each writer calls
one of the operations below inside its transaction; none marks listings by itself (the
architecture check in tests/test_desired_state.py allows ``mark_listings_pending`` here
only, and tests/support/desired_state_guard.py fails a request that wrote such a row and
committed without marking):

- ``write_product``: a product's fields or status changed (its bundles too on a status
  change, an archived product's listings made inactive);
- ``stock_written``: the stock ledger wrote stock rows (their products' listings and their
  bundles');
- ``write_listing``: a listing's own settings changed (the listing PATCH);
- ``push_again``: the marketplace may not show a listing's current state (a recorded push
  was overtaken, an outdated price push may have landed).

A bundle's components are written by ``bundles.set_components`` within a product change:
the product's ``updated_at`` changes with them, so ``write_product`` marks them.

Everything else about listings (pushing them, recording what the marketplace accepted) is
written by ``marketplaces`` only; this is the one write to listings made below it.
"""

from collections.abc import Iterable
from typing import Any

from ..db import db, is_postgres
from ..sql import Statement, column
from ..timeutil import now_ms
from .bundles import lock_listings_with_bundles, with_bundles
from .models import Listing, Product

_CHUNK = 400  # ids per IN (...) list
# ``{deactivate}``: "" or the SET of the archived status; ``{column}``: the listings' id or
# product column. A listing without a price is held, never pending: it is not pushed until
# someone sets its price (a push without one would go live at whatever price the
# marketplace picks).
_MARK_SET = (
    "UPDATE {L} SET {L.version} = {L.version} + 1, {L.next_push_at} = CASE"
    " WHEN {L.sync_status} = 'pending' THEN COALESCE({L.next_push_at}, {p:now}) ELSE {p:now} END,"
    " {L.sync_status} = CASE WHEN {L.price} IS NULL THEN 'held' ELSE 'pending' END"
    "{deactivate} WHERE "
)
_MARK = Statement(_MARK_SET + "{column} IN ({in:ids})", L=Listing)
# rows locked in id order, as the push service records outcomes: two transactions
# marking and recording the same listings never deadlock
_MARK_LOCKED = Statement(
    _MARK_SET + "{L.id} IN (SELECT {L.id} FROM {L} WHERE {column} IN ({in:ids})"
    " ORDER BY {L.id} FOR UPDATE)",
    L=Listing,
)
_DEACTIVATE = Statement(", {L.status} = 'inactive'", L=Listing)


def mark_listings_pending(
    *,
    product_ids: Iterable[str] = (),
    listing_ids: Iterable[str] = (),
    deactivate: bool = False,
    now: int | None = None,
) -> int:
    """Inside the caller's transaction: the listings of ``product_ids`` (and the listings
    ``listing_ids``) get a new desired-state ``version`` and become ``pending`` (``held``
    when they have no price).

    A pending listing keeps its due time (a backoff after an unavailable marketplace
    stands); an ``in_sync`` or ``error`` listing is due at once. ``deactivate``: the
    listings become ``inactive`` too (the product was archived). Returns the number marked.
    """
    if db.transaction_depth() == 0:
        raise RuntimeError("mark_listings_pending() must run inside the change's transaction")
    now = now_ms() if now is None else now
    status = _DEACTIVATE.sql() if deactivate else ""
    statement = _MARK_LOCKED if is_postgres() else _MARK
    marked = 0
    for name, ids in (("product", product_ids), ("id", listing_ids)):
        ids = sorted(set(ids))
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            cursor = statement.execute(
                {"now": now, "ids": chunk}, deactivate=status, column=column(Listing, name)
            )
            marked += cursor.rowcount or 0
    return marked


def write_product(product: Product, changed: dict[str, Any]) -> None:
    """Inside the caller's transaction (``product`` locked, as it was read): write
    ``changed`` (with its ``updated_at``) to the product and mark its listings pending.

    A status change marks the bundles using it too (a component's status decides whether
    they are available), its listings and theirs locked first, by id, at once (two marks:
    one lock order on PostgreSQL). Archiving makes the product's listings ``inactive``."""
    now = changed["updated_at"]
    archiving = changed.get("status") == "archived" and product.status != "archived"
    Product.update(**changed).where(Product.id == product.id).execute()
    if "status" in changed:
        lock_listings_with_bundles([product.id])  # two marks below: one lock order
    # every field of a product is part of what its listings show on the marketplaces
    mark_listings_pending(product_ids=[product.id], deactivate=archiving, now=now)
    if "status" in changed:
        # its bundles' availability follows it (archived: quantity 0 pushed)
        mark_listings_pending(product_ids=with_bundles([product.id]) - {product.id}, now=now)


def stock_written(product_ids: Iterable[str], now: int) -> None:
    """Inside the stock ledger's flush, after it wrote the stock rows of ``product_ids``:
    their listings and those of the bundles using them become pending (bundles follow
    their components' stock, DESIGN 14)."""
    mark_listings_pending(product_ids=with_bundles(product_ids), now=now)


def write_listing(listing_id: str, changed: dict[str, Any], now: int) -> None:
    """Inside the caller's transaction: write a listing's own settings ``changed`` (price,
    allocation, status...) and mark it pending."""
    Listing.update(**changed, updated_at=now).where(Listing.id == listing_id).execute()
    mark_listings_pending(listing_ids=[listing_id], now=now)


def push_again(listing_ids: Iterable[str], now: int | None = None) -> None:
    """Inside the caller's transaction: the marketplace may not show the current desired
    state of ``listing_ids`` (a newer version was made while a push was recorded, an
    outdated price push may have landed): they are pushed again, from their state then."""
    mark_listings_pending(listing_ids=listing_ids, now=now)
