"""Bulk requests: each item is checked on its own, so one bad item refuses only itself."""

import marshmallow as ma


def item_error(messages):
    """The per-item VALIDATION_ERROR of a bulk result."""
    return {
        "code": "VALIDATION_ERROR",
        "message": "The item is not valid.",
        "details": {"fields": messages},
    }


def load_items(schema, raw_items, key):
    """Load each raw item with ``schema``; one dict per item, in order, with its ``index``.

    An item that does not load becomes ``{index, <key>, error}``, ``<key>`` being the
    item's own value of it (when a string) so that the result can name the item.
    """
    items = []
    for index, raw in enumerate(raw_items):
        if not isinstance(raw, dict):
            error = item_error({"_schema": ["Not an object."]})
            items.append({"index": index, key: None, "error": error})
            continue
        try:
            item = schema.load(raw)
        except ma.ValidationError as exc:
            value = raw.get(key)
            value = value if isinstance(value, str) else None
            items.append({"index": index, key: value, "error": item_error(exc.messages)})
            continue
        items.append({**item, "index": index})
    return items
