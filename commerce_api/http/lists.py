"""List conventions of the web layer: shared query args, ``meta``, ``fields`` selection.

The keyset pagination itself lives on the ground floor (``commerce_api.pagination``), so
services never import the web layer.
"""

import re

import marshmallow as ma

from ..errors import validation_error
from ..pagination import CURSOR_PATTERN, MAX_CURSOR


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
        # checked by the pager, not here: a cursor we did not issue is INVALID_CURSOR (400)
        metadata={
            "description": "The `nextCursor` of the previous page (empty or left out: the "
            "first page). Opaque: only a cursor the service issued for the same list, sort, "
            "order and filters is valid, any other is 400 `INVALID_CURSOR`.",
            "pattern": CURSOR_PATTERN,
            "maxLength": MAX_CURSOR,
        },
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


MAX_FIELDS_ARG = 500  # every name of the longest resource is about 200 characters


def fields_pattern(names):
    """The regular expression of the ``fields`` values ``parse_fields`` accepts for ``names``:
    comma-separated, blanks around names and empty items ignored."""
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    item = rf"\s*(?:(?:{alternatives})\s*)?"
    return rf"^{item}(?:,{item})*$"


def fields_arg(names):
    """The ``fields`` query argument of a resource whose fields are ``names``; the document
    lists them (``pattern``), ``parse_fields`` refuses the others (422)."""
    return ma.fields.String(
        validate=ma.validate.Length(max=MAX_FIELDS_ARG),
        metadata={
            "description": "Comma-separated field names to return (`id` is always kept): "
            + ", ".join(f"`{name}`" for name in names)
            + ". It narrows the answer: each resource then has only the fields asked for, "
            "so the response schema's `required` holds only when `fields` is absent or empty.",
            "pattern": fields_pattern(names),
        },
    )


class MetaSchema(ma.Schema):
    total = ma.fields.Integer(
        allow_none=True,
        metadata={
            "description": "Rows matching the list's filters. Exact for the unfiltered and "
            "status-filtered lists; a list filtered otherwise counts at most "
            "`COMMERCE_LIST_COUNT_CAP` rows (default 10,000) and gives null past that."
        },
    )
    page = ma.fields.Integer()
    limit = ma.fields.Integer()
    nextCursor = ma.fields.String(allow_none=True)  # noqa: N815 (the spec's name)


def envelope_schema(name, item):
    """The schema ``{data: item}`` of a one-resource response, called ``name``."""
    return ma.Schema.from_dict({"data": ma.fields.Nested(item)}, name=name)


def list_schema(name, item):
    """The schema ``{data: [item], meta}`` of a list response, called ``name``."""
    fields = {"data": ma.fields.List(ma.fields.Nested(item)), "meta": ma.fields.Nested(MetaSchema)}
    return ma.Schema.from_dict(fields, name=name)


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
