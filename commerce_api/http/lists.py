"""List conventions: keyset cursors, ``meta``, ``fields`` selection, shared query args."""

import base64
import binascii
import json

import marshmallow as ma
from peewee import Tuple

from ..errors import ApiError, validation_error


class ListArgsSchema(ma.Schema):
    """Query arguments every list accepts; resources add filters and ``sort``."""

    class Meta:
        unknown = ma.RAISE

    limit = ma.fields.Integer(
        load_default=50,
        validate=ma.validate.Range(min=1, max=200),
        metadata={"description": "Page size (1-200, default 50)."},
    )
    cursor = ma.fields.String(
        metadata={"description": "The `nextCursor` of the previous page."},
        validate=ma.validate.Length(max=1000),
    )
    order = ma.fields.String(
        load_default="desc",
        validate=ma.validate.OneOf(["asc", "desc"]),
        metadata={"description": "Sort direction (default desc)."},
    )
    fields = ma.fields.String(
        metadata={"description": "Comma-separated field names to return (`id` is always kept)."},
        validate=ma.validate.Length(max=1000),
    )


class FieldsArgsSchema(ma.Schema):
    """Query arguments of a single-resource read."""

    class Meta:
        unknown = ma.RAISE

    fields = ma.fields.String(
        metadata={"description": "Comma-separated field names to return (`id` is always kept)."},
        validate=ma.validate.Length(max=1000),
    )


class MetaSchema(ma.Schema):
    total = ma.fields.Integer()
    page = ma.fields.Integer()
    limit = ma.fields.Integer()
    nextCursor = ma.fields.String(allow_none=True)  # noqa: N815 (the spec's name)


def parse_fields(value, allowed, always=("id",)):
    """Parse ``fields=a,b`` into a tuple of names, or None when absent."""
    if not value:
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if unknown:
        raise validation_error({"fields": [f"Unknown field: {name}." for name in unknown]})
    keep = [name for name in always if name in allowed and name not in names]
    return tuple(keep + names)


def select_fields(item, fields):
    if fields is None:
        return item
    return {name: item[name] for name in fields if name in item}


def encode_cursor(payload):
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor):
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ApiError("INVALID_CURSOR") from None
    if not isinstance(payload, dict):
        raise ApiError("INVALID_CURSOR")
    return payload


def paginate(query, *, sort_field, tiebreak, order, limit, cursor, kind, count=True):
    """Return ``(rows, meta)`` for one page of ``query`` ordered by (sort_field, tiebreak).

    The cursor carries the last row's exact stored values, so pages stay stable while
    rows are added; it is bound to the list (``kind``), the sort and the order.
    """
    sort_name = sort_field.name
    page = 1
    filtered = query
    if cursor:
        payload = decode_cursor(cursor)
        key = payload.get("k")
        if (
            payload.get("l") != kind
            or payload.get("s") != sort_name
            or payload.get("o") != order
            or not isinstance(key, list)
            or len(key) != 2
            or not isinstance(payload.get("p"), int)
            or payload["p"] < 2
            or not all(isinstance(v, str | int) and not isinstance(v, bool) for v in key)
        ):
            raise ApiError("INVALID_CURSOR")
        page = payload["p"]
        if sort_field is tiebreak:
            condition = tiebreak > key[1] if order == "asc" else tiebreak < key[1]
        else:
            left, right = Tuple(sort_field, tiebreak), Tuple(key[0], key[1])
            condition = left > right if order == "asc" else left < right
        filtered = query.where(condition)
    if order == "asc":
        ordering = (
            (sort_field.asc(),) if sort_field is tiebreak else (sort_field.asc(), tiebreak.asc())
        )
    else:
        ordering = (
            (sort_field.desc(),) if sort_field is tiebreak else (sort_field.desc(), tiebreak.desc())
        )
    rows = list(filtered.order_by(*ordering).limit(limit + 1))
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        next_cursor = encode_cursor(
            {
                "l": kind,
                "s": sort_name,
                "o": order,
                "p": page + 1,
                "k": [getattr(last, sort_name), getattr(last, tiebreak.name)],
            }
        )
    total = query.order_by().count() if count else None
    meta = {"total": total, "page": page, "limit": limit, "nextCursor": next_cursor}
    return rows, meta
