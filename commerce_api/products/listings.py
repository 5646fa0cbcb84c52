"""Marking listings pending: the one write to listings made below ``marketplaces``.

A listing's desired state follows its product's content and stock, and stock changes are
made by ``inventory`` (and by ``orders`` through it), below ``marketplaces`` in the
layering. Each such change marks the product's listings ``pending`` in its own transaction,
with this one statement; everything else about listings (pushing them, recording what the
marketplace accepted, prices) is written by ``marketplaces`` only.
"""

from collections.abc import Iterable

from ..db import db, is_postgres
from ..timeutil import now_ms
from .models import Listing

_CHUNK = 400  # ids per IN (...) list
_TABLE = Listing._meta.table_name


def mark_listings_pending(
    *,
    product_ids: Iterable[str] = (),
    listing_ids: Iterable[str] = (),
    deactivate: bool = False,
    now: int | None = None,
) -> int:
    """Inside the caller's transaction: the listings of ``product_ids`` (and the listings
    ``listing_ids``) get a new desired-state ``version`` and become ``pending``.

    A pending listing keeps its due time (a backoff after an unavailable marketplace
    stands); an ``in_sync`` or ``error`` listing is due at once. ``deactivate``: the
    listings become ``inactive`` too (the product was archived). Returns the number marked.
    """
    if db.transaction_depth() == 0:
        raise RuntimeError("mark_listings_pending() must run inside the change's transaction")
    now = now_ms() if now is None else now
    p = db.param
    status = """, "status" = 'inactive'""" if deactivate else ""
    head = (
        f'UPDATE "{_TABLE}" SET "version" = "version" + 1, "next_push_at" = CASE'
        f""" WHEN "sync_status" = 'pending' THEN COALESCE("next_push_at", {p}) ELSE {p} END,"""
        f""" "sync_status" = 'pending'{status} WHERE """
    )
    marked = 0
    for column, ids in (("product_id", product_ids), ("id", listing_ids)):
        ids = sorted(set(ids))
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            where = f'"{column}" IN ({", ".join([p] * len(chunk))})'
            if is_postgres():
                # rows locked in id order, as the push service records outcomes: two
                # transactions marking and recording the same listings never deadlock
                where = (
                    f'"id" IN (SELECT "id" FROM "{_TABLE}" WHERE {where} ORDER BY "id" FOR UPDATE)'
                )
            cursor = db.execute_sql(head + where, [now, now, *chunk])
            marked += cursor.rowcount or 0
    return marked
