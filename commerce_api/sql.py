"""Set-based SQL: statements written once, with table and column names from the models.

The one place below the domains where SQL text is made (STYLE.md, "One way to do each
thing"). A statement is a template rendered once per bound engine:

    CLAIM = Statement(
        "UPDATE {Job} SET {Job.status} = 'running' WHERE {Job.id} = {p:job}", Job=Job
    )
    CLAIM.execute({"job": job_id})

``{Model}`` is the model's quoted table, ``{Model.field}`` the quoted column of that field,
``{p:name}`` a parameter and ``{in:name}`` a list of them (``{Job.id} IN ({in:ids})``). A
statement runs with a mapping of exactly its names (a sequence, a missing or an unknown
name is refused): each engine's marks (``?``, ``%s``) are rendered from the names in text
order, a name may come more than once, and a list's length is part of the cache key. A
bare ``{p}`` is only a mark for ``render`` (a text another database runs by position).
Parts that vary between calls (a SET clause made from field names) are passed by name at
run time and are part of the cache key, so they must be SQL fragments drawn from a small
set, never values: values always go as parameters.

About two-thirds of a peewee query is building its SQL string and the hot paths run the
same statements all the time; here they are built once per (engine, statement, parts).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import peewee

from .db import db

# (engine, key) -> SQL text (or whatever ``build`` returned)
_STATEMENTS: dict[tuple, Any] = {}


def quote(name: str) -> str:
    return f'"{name}"'


def cached_statement(key: Any, build: Callable[[], Any]) -> Any:
    """What ``build()`` returns, built once per bound engine and ``key``."""
    cache_key = (id(db.obj), key)
    sql = _STATEMENTS.get(cache_key)
    if sql is None:
        sql = _STATEMENTS[cache_key] = build()
    return sql


def marks(count: int) -> str:
    """``count`` parameter marks separated by commas (``?, ?, ?``)."""
    return ", ".join([db.obj.param] * count)


def table(model: type[peewee.Model]) -> str:
    return quote(model._meta.table_name)


def column(model: type[peewee.Model], name: str) -> str:
    """The quoted column of the field ``name`` (a field name, or a foreign key's column
    name: ``tenant`` and ``tenant_id`` are the same column)."""
    meta = model._meta
    field = meta.fields.get(name) or meta.columns[name]
    return quote(field.column_name)


class _Renderer(string.Formatter):
    """Fills a template: ``{Model}``, ``{Model.field}``, ``{p:name}``, ``{in:name}`` and
    the named parts."""

    def __init__(
        self,
        models: dict[str, type[peewee.Model]],
        parts: dict[str, str],
        param: str,
        lengths: Mapping[str, int],
    ):
        self.models = models
        self.parts = parts
        self.param = param
        self.lengths = lengths

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[str, str]:
        if field_name == "p":
            return self.param, field_name  # ``{p:name}``: the spec is left out (format_field)
        if field_name == "in":
            return _IN, field_name  # ``{in:name}``: as many marks as the list has values
        if field_name in self.parts:
            return self.parts[field_name], field_name
        head, _, name = field_name.partition(".")
        model = self.models[head]
        return (column(model, name) if name else table(model)), field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        if value is _IN:
            return ", ".join([self.param] * self.lengths[format_spec])
        # otherwise a spec is only ever a parameter's name (``{p:name}``): the mark is the same
        return value


_IN = object()  # the value a ``{in:name}`` field renders from
_NO_PARAMETERS: Mapping[str, Any] = MappingProxyType({})


def parameter_names(template: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The names of a template's marks in text order (``{p:name}``: one value,
    ``{in:name}``: a list), and which of them are lists. A bare ``{p}`` (a mark for a
    text another database runs, ``render``) leaves the names empty; never both."""
    names, lists, bare = [], set(), False
    for _, field, spec, _ in string.Formatter().parse(template):
        if field not in ("p", "in"):
            continue
        if not spec:
            bare = True
            continue
        names.append(spec)
        if field == "in":
            lists.add(spec)
    if bare and names:
        raise ValueError(f"a statement uses {{p:name}} or {{p}}, not both: {template!r}")
    both = lists.intersection(name for name in names if names.count(name) > 1)
    if both:
        raise ValueError(f"{sorted(both)} used as a list and as a value: {template!r}")
    return tuple(names), frozenset(lists)


class Statement:
    """A SQL template whose names come from models, rendered once per engine and parts.

    Its parameters are named (``{p:name}``, ``{in:name}`` for a list) and it runs with a
    mapping of exactly those names; the engine's marks (``?``, ``%s``) are rendered from
    them in text order, so the order is never counted by hand.
    """

    def __init__(self, template: str, **models: type[peewee.Model]):
        self.template = template
        self.models = models
        self.names, self.lists = parameter_names(template)  # marks in text order
        # bare ``{p}`` marks: only rendered (``render``) for a database that binds by position
        self.positional = not self.names and "{p}" in template
        self._expected = frozenset(self.names)
        self._plain: dict[str, str] = {}  # param -> text, for the statements without parts

    def sql(self, lengths: tuple[tuple[str, int], ...] = (), **parts: str) -> str:
        """The text for the bound engine (the names do not depend on it, the marks do);
        ``lengths``: each list parameter's number of values."""
        param = db.obj.param  # not the proxy's __getattr__: this runs on every request
        if not parts and not lengths:
            text = self._plain.get(param)
            if text is None:
                text = self._plain[param] = self.render(param)
            return text
        text = _STATEMENTS.get((param, self, lengths, tuple(sorted(parts.items()))))
        return self.render(param, dict(lengths), **parts) if text is None else text

    def render(self, param: str, lengths: Mapping[str, int] | None = None, **parts: str) -> str:
        """The text with ``param`` as the parameter mark (``?`` or ``%s``), for a
        database other than the bound one too; ``lengths``: each list's number of values."""
        sized = tuple(sorted(lengths.items())) if lengths else ()
        key = (param, self, sized, tuple(sorted(parts.items())) if parts else ())
        text = _STATEMENTS.get(key)
        if text is None:
            if self.lists.difference(lengths or ()):
                raise KeyError(f"the number of values of {sorted(self.lists)} is needed")
            renderer = _Renderer(self.models, parts, param, lengths or {})
            text = _STATEMENTS[key] = renderer.format(self.template)
        return text

    def bind(self, params: Mapping[str, Any]) -> tuple[list[Any], tuple[tuple[str, int], ...]]:
        """The values in mark order (lists spread) and each list's length, from ``params``:
        a mapping with exactly the statement's names (a sequence is refused)."""
        if not isinstance(params, Mapping) or self.positional:
            raise TypeError(f"{self!r} takes its parameters by name ({{p:name}}), as a mapping")
        if params.keys() != self._expected:
            missing = sorted(self._expected.difference(params))
            extra = sorted(set(params).difference(self._expected))
            raise ValueError(f"{self!r}: missing parameters {missing}, unknown {extra}")
        if not self.lists:
            return [params[name] for name in self.names], ()
        values: list[Any] = []
        lengths = {}
        for name in self.names:
            if name in self.lists:
                items = list(params[name])
                lengths[name] = len(items)
                values += items
            else:
                values.append(params[name])
        return values, tuple(sorted(lengths.items()))

    def execute(self, params: Mapping[str, Any] = _NO_PARAMETERS, **parts: str) -> Any:
        """Run the statement once with ``params`` (by name); the cursor."""
        values, lengths = self.bind(params)
        return db.execute_sql(self.sql(lengths, **parts), values)

    def executemany(self, rows: Iterable[Mapping[str, Any]], **parts: str) -> None:
        """Run the statement for every row of parameters (by name), as one driver call."""
        if self.lists:
            raise ValueError(f"{self!r} has list parameters: run it once per list")
        values = [self.bind(row)[0] for row in rows]
        executemany(self.sql(**parts), values)

    def __repr__(self) -> str:
        return f"Statement({self.template!r})"


def executemany(sql: str, rows: Iterable[Sequence[Any]]) -> None:
    """``cursor.executemany`` with peewee's error mapping (IntegrityError & co); a list of
    one row is executed as such (the driver's executemany costs more for one)."""
    if isinstance(rows, list | tuple) and len(rows) == 1:
        db.execute_sql(sql, rows[0])
        return
    with peewee.__exception_wrapper__:
        db.cursor().executemany(sql, rows)


def insert_statement(
    model: type[peewee.Model], names: tuple[str, ...] | None = None, on_conflict: str = ""
) -> str:
    """``INSERT INTO <table> (<columns>) VALUES (<marks>)`` for the fields ``names`` (a
    tuple; default: every field of ``model`` in its order), built once per engine;
    ``on_conflict``: what follows ``ON CONFLICT`` (``"DO NOTHING"``), if anything."""
    cache_key = (id(db.obj), model, names, on_conflict)  # no closure or call on the hot path
    sql = _STATEMENTS.get(cache_key)
    if sql is None:
        meta = model._meta
        fields = meta.sorted_fields if names is None else [meta.fields[n] for n in names]
        columns = ", ".join(quote(field.column_name) for field in fields)
        sql = f"INSERT INTO {table(model)} ({columns}) VALUES ({marks(len(fields))})"
        if on_conflict:
            sql += f" ON CONFLICT {on_conflict}"
        _STATEMENTS[cache_key] = sql
    return sql


def update_statement(model: type[peewee.Model], names: tuple[str, ...], key: str) -> str:
    """``UPDATE <table> SET <names> WHERE <key> = <mark>``, built once per engine."""

    def build() -> str:
        assignments = ", ".join(f"{column(model, name)} = {db.param}" for name in names)
        return f"UPDATE {table(model)} SET {assignments} WHERE {column(model, key)} = {db.param}"

    return cached_statement(("update", model, names, key), build)


class PreparedQuery:
    """A query built once by peewee and then run as plain SQL with parameters.

    About two-thirds of a peewee ``Model.get`` is building the SQL string; hot paths
    (authentication, single-row reads) build it once per engine instead. ``builder`` is
    called with placeholder values and must use them in the order the SQL binds them.
    """

    def __init__(self, builder: Callable[..., peewee.Query], nparams: int):
        self.builder = builder
        self.nparams = nparams

    def compiled(self) -> tuple[str, tuple, tuple]:
        """``(sql, names, converters)``, built once per engine."""
        return cached_statement(("prepared", id(self)), self._build)

    def _build(self) -> tuple[str, tuple, tuple]:
        query = self.builder(*[f"__p{i}__" for i in range(self.nparams)])
        sql, params = query.sql()
        if params != [f"__p{i}__" for i in range(self.nparams)]:
            raise ValueError(f"builder binds {params!r}, not its placeholders in order")
        returning = query._returning  # peewee's selected columns, in order
        fields = [getattr(node, "python_value", None) for node in returning]
        names = tuple(getattr(node, "name", None) for node in returning)
        # per name, the last column of that name wins (as in a dict built in order)
        last = {
            name: (index, conv)
            for index, (name, conv) in enumerate(zip(names, fields, strict=True))
        }
        converters = tuple(
            (index, name, conv) for name, (index, conv) in last.items() if conv is not None
        )
        return sql, names, converters

    def dicts(self, *params: Any) -> list[dict[str, Any]]:
        """All rows as dicts, each value converted as its peewee field would."""
        sql, names, converters = self.compiled()
        rows = db.execute_sql(sql, params).fetchall()
        result = []
        for row in rows:
            item = dict(zip(names, row, strict=True))
            for index, name, conv in converters:
                value = row[index]
                if value is not None:
                    item[name] = conv(value)
            result.append(item)
        return result

    def first(self, *params: Any) -> dict[str, Any] | None:
        rows = self.dicts(*params)
        return rows[0] if rows else None


class PreparedIn:
    """A read whose last condition is ``column IN (...)``, compiled once per list length.

    Peewee spends ~30 ms composing a query with 500 values; a chunk's reads are built
    once per length (a job sees two: full chunks and the last one) and then run as plain
    SQL with parameters, each value converted as its field would (``PreparedQuery``).
    ``builder(*fixed, values)`` must bind the fixed parameters before the list.
    """

    def __init__(self, builder: Callable[..., peewee.Query], nfixed: int):
        self.builder = builder
        self.nfixed = nfixed
        self._by_length: dict[int, PreparedQuery] = {}

    def _prepared(self, length: int) -> PreparedQuery:
        prepared = self._by_length.get(length)
        if prepared is None:
            nfixed = self.nfixed

            def build(*placeholders: Any) -> peewee.Query:
                return self.builder(*placeholders[:nfixed], list(placeholders[nfixed:]))

            prepared = self._by_length[length] = PreparedQuery(build, nfixed + length)
        return prepared

    def dicts(self, *params: Any, values: Iterable[Any]) -> list[dict[str, Any]]:
        """Rows as dicts, each value converted by its field."""
        values = list(values)
        return self._prepared(len(values)).dicts(*params, *values)

    def tuples(self, *params: Any, values: Iterable[Any]) -> list[tuple]:
        """Rows as the driver returns them (the caller converts what it needs)."""
        values = list(values)
        sql, _, _ = self._prepared(len(values)).compiled()
        return db.execute_sql(sql, [*params, *values]).fetchall()


# Bulk writes: one ``executemany`` per table and chunk ----------------------------------

# values of these types go to the driver as they are; others through their field
_PLAIN_TYPES = (str, int, float, bool, type(None))
# exact classes: a subclass (JSONField is a TextField) may convert differently
_PLAIN_FIELDS = frozenset(
    (
        peewee.CharField,
        peewee.TextField,
        peewee.IntegerField,
        peewee.BigIntegerField,
        peewee.FloatField,
        peewee.BooleanField,
        peewee.ForeignKeyField,
    )
)


def _row_values(fields: Sequence[peewee.Field], row: dict[str, Any]) -> list[Any]:
    values = []
    for field in fields:
        name = field.name
        if name in row:
            value = row[name]
        else:
            default = field.default
            value = default() if callable(default) else default
        if type(field) in _PLAIN_FIELDS and isinstance(value, _PLAIN_TYPES):
            values.append(value)
        else:
            values.append(field.db_value(value))
    return values


def upsert_statement(
    model: type[peewee.Model], keys: tuple[str, ...], newer_column: str | None = None
) -> str:
    """``insert_statement(model)`` that replaces the other columns of the row whose unique
    ``keys`` (field names) match; with ``newer_column``, only when the incoming value of
    that column is not older than the stored one. Built once per engine."""

    def build() -> str:
        fields = model._meta.sorted_fields
        key_columns = [model._meta.fields[name].column_name for name in keys]
        updates = ", ".join(
            f"{quote(f.column_name)} = excluded.{quote(f.column_name)}"
            for f in fields
            if f.column_name not in key_columns
        )
        conflict = f"({', '.join(key_columns)}) DO UPDATE SET {updates}"
        if newer_column:
            # keep the stored row when it is newer than the incoming one
            newer = quote(newer_column)
            conflict += f" WHERE excluded.{newer} >= {table(model)}.{newer}"
        return insert_statement(model, on_conflict=conflict)

    return cached_statement(("upsert", model, keys, newer_column), build)


def insert_rows(
    model: type[peewee.Model],
    rows: Sequence[dict[str, Any]],
    upsert_keys: Sequence[str] | None = None,
    newer_column: str | None = None,
) -> int:
    """Insert ``rows`` (dicts by field name) with one ``executemany``; inside a transaction.

    ``upsert_keys`` (field names of a unique index) turn it into an upsert that replaces
    the other columns; with ``newer_column`` only when the incoming value is not older.
    """
    if not rows:
        return 0
    if db.transaction_depth() == 0:
        raise RuntimeError("bulk writes belong inside the chunk's transaction")
    fields = model._meta.sorted_fields
    params = [_row_values(fields, row) for row in rows]
    if upsert_keys:
        sql = upsert_statement(model, tuple(upsert_keys), newer_column)
    else:
        sql = insert_statement(model)
    executemany(sql, params)
    return len(params)
