"""One definition per resource shape (DESIGN 12): a response schema, compiled to a serializer.

The marshmallow schema that documents a resource in the OpenAPI document is also what its
runtime output is made from: ``compile_serializer`` turns the schema into a plain function,
row -> dict, and ``field_names`` gives the names ``fields=`` accepts. Marshmallow's own
``dump`` is not on the hot path: the converters are chosen once, when the schema is
compiled, from each field's type, and the per-row work is one dict comprehension over a
prepared plan.

A row is a peewee model (its ``__data__``) or a ``.dicts()`` row. A field reads the row's
``attribute=`` (else its own name) and is shown under its ``data_key`` (else its name):

- ``DateTime``: stored epoch milliseconds, shown by ``timeutil.format_ms``;
- ``Float`` (money, measures, stored as ``Decimal``): ``float``;
- ``Boolean``: ``bool`` (SQLite's 0/1 included);
- ``Nested`` / ``List(Nested)``: the nested schema's compiled serializer, per item;
- anything else, and every field whose metadata says ``as_stored`` (JSON columns that
  hold the shown form already): as stored.

``None`` stays ``None``, except where the schema says the field is never null (no
``allow_none``): there a ``List`` shows ``[]``, a ``Dict`` ``{}`` and a ``Boolean``
``false``. A caller passes the values the row does not hold (related rows, a computed
value) as keyword arguments, by field name: they take the row's place and go through the
same converter.
"""

from collections.abc import Callable, Mapping
from typing import Any

import marshmallow as ma

from .timeutil import format_ms

# metadata key: the stored value is already the shown form (a JSON column), used as is
AS_STORED = "as_stored"

Row = Any  # a peewee model instance or a dict row
Serializer = Callable[..., dict]
Converter = Callable[[Any], Any]

SchemaLike = type[ma.Schema] | ma.Schema


def _instance(schema: SchemaLike) -> ma.Schema:
    return schema() if isinstance(schema, type) else schema


def _shown(schema: SchemaLike) -> list[tuple[str, ma.fields.Field]]:
    """(attribute name, field) of every field the output shows, in declaration order."""
    return list(_instance(schema).dump_fields.items())


def field_names(schema: SchemaLike) -> tuple[str, ...]:
    """The output names of ``schema``'s fields, in order: what ``fields=`` accepts."""
    return tuple(field.data_key or name for name, field in _shown(schema))


def number(value: Any) -> float | None:
    """A stored number (a ``Decimal``: money, measures) as a JSON number."""
    return None if value is None else float(value)


def _boolean(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _empty_dict(value: Any) -> Any:
    return {} if value is None else value


def _nested(serialize: Serializer) -> Converter:
    def convert(value: Any) -> dict | None:
        return None if value is None else serialize(value)

    return convert


def _items(convert: Converter | None, allow_none: bool) -> Converter:
    empty = None if allow_none else []

    if convert is None:

        def items(value: Any) -> Any:
            return empty if value is None else value

    else:

        def items(value: Any) -> Any:
            return empty if value is None else [convert(item) for item in value]

    return items


def converter(field: ma.fields.Field) -> Converter | None:
    """How ``field``'s stored value becomes its shown value; None: as stored."""
    if field.metadata.get(AS_STORED):
        return None
    if isinstance(field, ma.fields.DateTime):
        return format_ms
    if isinstance(field, ma.fields.Float | ma.fields.Decimal):
        return number
    if isinstance(field, ma.fields.Boolean):
        return _boolean if field.allow_none else bool
    if isinstance(field, ma.fields.Nested):
        inner = compile_serializer(field.schema)
        if field.many:
            return _items(inner, field.allow_none)
        return _nested(inner)
    if isinstance(field, ma.fields.List):
        return _items(converter(field.inner), field.allow_none)
    if isinstance(field, ma.fields.Dict) and not field.allow_none:
        return _empty_dict
    return None


def compile_serializer(
    schema: SchemaLike, convert: Mapping[str, Converter | None] | None = None
) -> Serializer:
    """``schema``'s serializer: ``serialize(row, **given) -> dict`` in the schema's order.

    ``convert`` replaces the converter of the fields it names (a special case the field
    type does not say, kept at the call site); ``None`` there: shown as given.
    """
    convert = convert or {}
    unknown = set(convert) - {name for name, _ in _shown(schema)}
    if unknown:
        raise ValueError(f"{sorted(unknown)} are not fields of {schema!r}")
    plan = tuple(
        (
            name,
            field.data_key or name,
            field.attribute or name,
            convert[name] if name in convert else converter(field),
        )
        for name, field in _shown(schema)
    )
    plain = tuple((key, attribute, fn) for _, key, attribute, fn in plan)
    names = frozenset(name for name, *_ in plan)

    def serialize(row: Row, **given: Any) -> dict:
        get = row.get if isinstance(row, dict) else row.__data__.get
        if not given:
            return {
                key: get(attribute) if fn is None else fn(get(attribute))
                for key, attribute, fn in plain
            }
        if not names.issuperset(given):
            raise TypeError(f"{sorted(set(given) - names)} are not fields of {schema!r}")
        data = {}
        for name, key, attribute, fn in plan:
            value = given[name] if name in given else get(attribute)
            data[key] = value if fn is None else fn(value)
        return data

    serialize.schema = _instance(schema).__class__
    return serialize


# Results held as JSON (a job's result) -------------------------------------------------


class ShapeError(ValueError):
    """A value lacks a field its documented schema requires (``path``: where)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} is required by the documented schema and missing or null")
        self.path = path


def documented_required(schema: SchemaLike) -> frozenset[str]:
    """The names of the fields a response schema's document marks ``required``: those the
    schema marks ``required=True`` where it marks any, else every field (the rule of
    ``http/openapi_responses.exact_responses`` for a schema only responses use)."""
    shown = _shown(schema)
    marked = {name for name, field in shown if field.required}
    return frozenset(marked or (name for name, _ in shown))


Shape = Callable[[Any, str], Any]


def _shape_of(field: ma.fields.Field) -> Shape | None:
    """How a present value of ``field`` is brought to its documented form; None: as is."""
    if isinstance(field, ma.fields.Nested):
        inner = compile_shape(field.schema)
        if field.many:
            return lambda value, path: [inner(item, f"{path}[{i}]") for i, item in enumerate(value)]
        return inner
    if isinstance(field, ma.fields.List):
        item = _shape_of(field.inner)
        if item is None:
            return None
        return lambda value, path: [item(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(field, ma.fields.Float | ma.fields.Decimal):
        return lambda value, path: number(value)
    if isinstance(field, ma.fields.Boolean):
        return lambda value, path: bool(value)
    return None


def _empty(field: ma.fields.Field) -> Any:
    """A required, never-null field's value when it is missing; ShapeError: it has none."""
    if isinstance(field, ma.fields.List) or (isinstance(field, ma.fields.Nested) and field.many):
        return []
    if isinstance(field, ma.fields.Dict):
        return {}
    return ShapeError


def compile_shape(schema: SchemaLike) -> Callable[..., dict]:
    """``schema``'s shape: ``shape(data, path="result") -> dict``, the JSON object ``data``
    (a job's result) as its document shows it, made once from the schema like a serializer.

    Every field the document marks required is present: a missing or null one is ``null``
    where the field allows it, ``[]`` / ``{}`` for a list or an object, else ``ShapeError``
    (the value cannot match its document). An optional field is left out when missing or
    null (unless it allows null). Nested objects and lists of them are shaped the same way,
    numbers become JSON numbers, keys the schema does not have are dropped.
    """
    required = documented_required(schema)
    plan = tuple(
        (
            field.data_key or name,
            name in required,
            field.allow_none,
            _empty(field),
            _shape_of(field),
        )
        for name, field in _shown(schema)
    )

    def shape(data: Any, path: str = "result") -> dict:
        if not isinstance(data, dict):
            raise ShapeError(path)
        out = {}
        for key, needed, nullable, empty, convert in plan:
            value = data.get(key)
            if value is None:
                if nullable and (needed or key in data):
                    out[key] = None
                elif needed:
                    if empty is ShapeError:
                        raise ShapeError(f"{path}.{key}")
                    out[key] = empty.copy()
                continue
            out[key] = value if convert is None else convert(value, f"{path}.{key}")
        return out

    return shape
