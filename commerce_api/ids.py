"""Identifiers: a kind prefix and a ULID, e.g. ``prod_01JD3Q...``."""

from ulid import ULID

PREFIXES = {
    "product": "prod",
    "order": "ord",
    "warehouse": "wh",
    "adjustment": "adj",
    "job": "job",
    "batch": "batch",
    "rule": "rule",
    "recommendation": "rec",
    "key": "key",
    "event": "evt",
    "webhook": "whk",
    "delivery": "dlv",
    "return": "ret",
    "connection": "mkc",
    "listing": "lst",
    "stock": "stk",
    "request": "req",
    "competitor_price": "cpr",
    "sync": "syn",
    "import": "imp",
}


def new_id(kind):
    """Return a new identifier for ``kind`` (a key of PREFIXES)."""
    return f"{PREFIXES[kind]}_{ULID()}"
