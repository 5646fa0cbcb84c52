"""Marking listings pending: the one write to listings made below ``marketplaces``.

A listing's desired state follows its product's content and stock, and stock changes are
made by ``inventory`` (and by ``orders`` through it), below ``marketplaces`` in the
layering. Each such change marks the product's listings ``pending`` in its own transaction,
with this one statement; everything else about listings (pushing them, recording what the
marketplace accepted, prices) is written by ``marketplaces`` only.
"""

from collections.abc import Iterable

from ..db import db, is_postgres
from ..sql import Statement, column
from ..timeutil import now_ms
from .models import Listing

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
