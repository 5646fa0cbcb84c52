"""JSON encoding and the ``{data}`` / ``{data, meta}`` envelopes."""

import json
from collections.abc import Callable

from flask import Response
from flask.json.provider import DefaultJSONProvider

from ..db import json_default
from .lists import parse_fields, select_fields


def dumps(payload):
    # allow_nan=False: NaN and Infinity are not JSON; emitting them would break every client
    return json.dumps(
        payload, default=json_default, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


class JSONProvider(DefaultJSONProvider):
    """Flask's provider, with Decimal as a number instead of a string."""

    def dumps(self, obj, **kwargs):
        kwargs.setdefault("default", json_default)
        kwargs.setdefault("ensure_ascii", False)
        kwargs.setdefault("allow_nan", False)
        return json.dumps(obj, **kwargs)


def json_response(payload, status=200, headers=None):
    return Response(dumps(payload), status=status, headers=headers, mimetype="application/json")


def one(data, status=200, headers=None):
    """A single-resource response: ``{data: {...}}``."""
    return json_response({"data": data}, status, headers)


def many(data, meta, status=200):
    """A list response: ``{data: [...], meta: {...}}``."""
    return json_response({"data": data, "meta": meta}, status)


def no_content():
    return Response(status=204)


def resource_page(
    args: dict, allowed, get_item: Callable, *params, always: tuple[str, ...] = ("id",)
) -> Response:
    """A single-resource response: ``get_item(*params)``, cut to the ``fields`` asked for
    (checked first: an unknown field is a 422 before any lookup; ``always`` as in
    ``parse_fields``)."""
    fields = parse_fields(args.get("fields"), allowed, always)
    return one(select_fields(get_item(*params), fields))


def list_page(
    args: dict, allowed, list_items: Callable, *params, always: tuple[str, ...] = ("id",)
) -> Response:
    """The list response: ``list_items(*params, args) -> (items, meta)``, each item cut
    to the ``fields`` asked for (checked first, before any lookup)."""
    fields = parse_fields(args.get("fields"), allowed, always)
    data, meta = list_items(*params, args)
    return many([select_fields(item, fields) for item in data], meta)
