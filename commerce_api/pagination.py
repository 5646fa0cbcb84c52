"""Keyset (cursor) pagination and the inclusive date-range filter of every list.

Ground floor: services page their queries with ``paginate`` and the web layer puts
``meta`` into the body.
"""

import base64
import binascii
import hashlib
import json
import math
import re
from decimal import Decimal

from peewee import BooleanField, DecimalField, FloatField, IntegerField, Tuple

from .errors import ApiError
from .timeutil import date_end_ms, date_start_ms
from .totals import bounded

MAX_CURSOR = 1000  # characters; longer is not a cursor we issued
# What a cursor we issue looks like (unpadded base64url), as the document says; empty: the
# first page. Only a cursor issued for the same list, sort, order and filters is valid.
CURSOR_PATTERN = "^[A-Za-z0-9_-]*$"
_CURSOR = re.compile(CURSOR_PATTERN[1:-1])


def encode_cursor(payload):
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor):
    if len(cursor) > MAX_CURSOR or _CURSOR.fullmatch(cursor) is None:
        raise ApiError("INVALID_CURSOR")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError):
        raise ApiError("INVALID_CURSOR") from None
    if not isinstance(payload, dict):
        raise ApiError("INVALID_CURSOR")
    return payload


def _scope_digest(scope):
    if scope is None:
        return None
    text = json.dumps(scope, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cursor_value(field, value):
    """A stored value as a cursor carries it (JSON: int, or text for decimals)."""
    return str(value) if isinstance(field, DecimalField) and value is not None else value


def _key_value(field, value):
    """A cursor's value back as the column's type; INVALID_CURSOR when it cannot be one.

    A crafted cursor must never reach the database with a value of another type (PostgreSQL
    refuses to compare text with an integer), out of range, or holding NUL.
    """
    if isinstance(field, BooleanField):
        if isinstance(value, bool):
            return value
    elif isinstance(field, IntegerField | FloatField):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if isinstance(field, IntegerField) and number and not isinstance(value, int):
            number = False  # a float for an integer column
        if number and math.isfinite(value) and -(2**63) <= value < 2**63:
            return value
    elif isinstance(value, str) and len(value) <= MAX_CURSOR and "\x00" not in value:
        if not isinstance(field, DecimalField):
            return value
        try:
            number = Decimal(value)
        except ArithmeticError:
            number = None
        if number is not None and number.is_finite():
            return number
    raise ApiError("INVALID_CURSOR")


def paginate(query, *, sort_field, tiebreak, order, limit, cursor, kind, scope=None, total=None):
    """Return ``(rows, meta)`` for one page of ``query`` ordered by (sort_field, tiebreak).

    The cursor carries the last row's exact stored values, so pages stay stable while
    rows are added; it is bound to the list (``kind``), the sort, the order and ``scope``
    (the tenant and filters that shaped ``query``, when the caller gives them).
    ``total``: the list's maintained count (``totals.maintained``) when the caller has one
    for this query; otherwise ``query`` is counted, bounded (``totals.bounded``).
    """
    sort_name = sort_field.name
    page = 1
    filtered = query
    digest = _scope_digest(scope)
    if cursor:
        page, key = _read_cursor(cursor, sort_field, tiebreak, order, kind, digest)
        filtered = query.where(_after_key(sort_field, tiebreak, order, key))
    rows = list(filtered.order_by(*_ordering(sort_field, tiebreak, order)).limit(limit + 1))
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        if isinstance(last, dict):  # a ``.dicts()`` query
            key = [last[sort_name], last[tiebreak.name]]
        else:
            key = [getattr(last, sort_name), getattr(last, tiebreak.name)]
        key = [_cursor_value(sort_field, key[0]), _cursor_value(tiebreak, key[1])]
        payload = {"l": kind, "s": sort_name, "o": order, "p": page + 1, "k": key}
        if digest is not None:
            payload["f"] = digest
        next_cursor = encode_cursor(payload)
    if total is None:  # no maintained count for this query: count it, bounded
        total = bounded(query)
    meta = {"total": total, "page": page, "limit": limit, "nextCursor": next_cursor}
    return rows, meta


def _read_cursor(cursor, sort_field, tiebreak, order, kind, digest):
    """The page number and the last row's (sort, tiebreak) values a cursor carries;
    ``INVALID_CURSOR`` when it belongs to another list, sort, order or scope."""
    payload = decode_cursor(cursor)
    key = payload.get("k")
    if (
        payload.get("l") != kind
        or payload.get("s") != sort_field.name
        or payload.get("o") != order
        or payload.get("f") != digest
        or not isinstance(key, list)
        or len(key) != 2
        or not isinstance(payload.get("p"), int)
        or isinstance(payload["p"], bool)
        or payload["p"] < 2
    ):
        raise ApiError("INVALID_CURSOR")
    return payload["p"], [_key_value(sort_field, key[0]), _key_value(tiebreak, key[1])]


def _after_key(sort_field, tiebreak, order, key):
    """The condition for the rows after ``key`` in the list's order."""
    if sort_field is tiebreak:
        return tiebreak > key[1] if order == "asc" else tiebreak < key[1]
    left, right = Tuple(sort_field, tiebreak), Tuple(key[0], key[1])
    return left > right if order == "asc" else left < right


def _ordering(sort_field, tiebreak, order):
    """ORDER BY (sort_field, tiebreak) in ``order`` (one column when they are the same)."""
    fields = (sort_field,) if sort_field is tiebreak else (sort_field, tiebreak)
    return tuple(field.asc() if order == "asc" else field.desc() for field in fields)


def paginate_args(
    query, args, *, sort_field, tiebreak, kind, default_order="desc", scope=None, total=None
):
    """``paginate`` with a list's query arguments (``order``, ``limit``, ``cursor``)."""
    return paginate(
        query,
        sort_field=sort_field,
        tiebreak=tiebreak,
        order=args.get("order") or default_order,
        limit=args["limit"],
        cursor=args.get("cursor"),
        kind=kind,
        scope=scope,
        total=total,
    )


def filter_equal(query, model, args, names):
    """Keep the rows whose column ``name`` equals ``args[name]``, for each name given."""
    for name in names:
        if args.get(name):
            query = query.where(getattr(model, name) == args[name])
    return query


def filter_date_range(query, column, args):
    """Apply the inclusive ``start_date`` / ``end_date`` filters (ISO dates, UTC) to ``column``."""
    if args.get("start_date"):
        query = query.where(column >= date_start_ms(args["start_date"]))
    if args.get("end_date"):
        query = query.where(column <= date_end_ms(args["end_date"]))
    return query
