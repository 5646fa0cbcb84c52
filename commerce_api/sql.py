"""Set-based SQL: statements written once, with table and column names from the models.

The one place below the domains where SQL text is made (STYLE.md, "One way to do each
thing"). A statement is a template rendered once per bound engine:

    CLAIM = Statement(
        "UPDATE {Job} SET {Job.status} = 'running' WHERE {Job.id} = {p}", Job=Job
    )
    CLAIM.execute((job_id,))

``{Model}`` is the model's quoted table, ``{Model.field}`` the quoted column of that field,
``{p}`` the engine's parameter mark. Parts that vary between calls (a list of marks, a SET
clause made from field names) are passed by name at run time and are part of the cache
key, so they must be SQL fragments drawn from a small set, never values: values always go
as parameters.

About two-thirds of a peewee query is building its SQL string and the hot paths run the
same statements all the time; here they are built once per (engine, statement, parts).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Sequence
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
    return ", ".join([db.param] * count)


def table(model: type[peewee.Model]) -> str:
    return quote(model._meta.table_name)


def column(model: type[peewee.Model], name: str) -> str:
    return quote(model._meta.fields[name].column_name)


class _Renderer(string.Formatter):
    """Fills a template: ``{Model}``, ``{Model.field}``, ``{p}`` and the named parts."""

    def __init__(self, models: dict[str, type[peewee.Model]], parts: dict[str, str]):
        self.models = models
        self.parts = parts

    def get_field(self, field_name, args, kwargs):
        if field_name == "p":
            return db.param, field_name
        if field_name in self.parts:
            return self.parts[field_name], field_name
        head, _, name = field_name.partition(".")
        model = self.models[head]
        return (column(model, name) if name else table(model)), field_name


class Statement:
    """A SQL template whose names come from models, rendered once per engine and parts."""

    def __init__(self, template: str, **models: type[peewee.Model]):
        self.template = template
        self.models = models

    def sql(self, **parts: str) -> str:
        key = (id(db.obj), self, tuple(sorted(parts.items())) if parts else ())
        text = _STATEMENTS.get(key)
        if text is None:
            text = _STATEMENTS[key] = _Renderer(self.models, parts).format(self.template)
        return text

    def execute(self, params: Sequence[Any] = (), **parts: str):
        """Run the statement once; returns the cursor."""
        return db.execute_sql(self.sql(**parts), params)

    def executemany(self, rows: Iterable[Sequence[Any]], **parts: str) -> None:
        """Run the statement for every parameter row, as one driver call."""
        executemany(self.sql(**parts), rows)

    def __repr__(self):
        return f"Statement({self.template!r})"


def executemany(sql: str, rows: Iterable[Sequence[Any]]) -> None:
    """``cursor.executemany`` with peewee's error mapping (IntegrityError & co)."""
    with peewee.__exception_wrapper__:
        db.cursor().executemany(sql, rows)


def insert_statement(model: type[peewee.Model], names: tuple[str, ...] | None = None) -> str:
    """``INSERT INTO <table> (<columns>) VALUES (<marks>)`` for the fields ``names`` (a
    tuple; default: every field of ``model`` in its order), built once per engine."""
    cache_key = (id(db.obj), model, names)  # no closure or call on the hot path
    sql = _STATEMENTS.get(cache_key)
    if sql is None:
        meta = model._meta
        fields = meta.sorted_fields if names is None else [meta.fields[n] for n in names]
        columns = ", ".join(quote(field.column_name) for field in fields)
        sql = f"INSERT INTO {table(model)} ({columns}) VALUES ({marks(len(fields))})"
        _STATEMENTS[cache_key] = sql
    return sql


def update_statement(model: type[peewee.Model], names: tuple[str, ...], key: str) -> str:
    """``UPDATE <table> SET <names> WHERE <key> = <mark>``, built once per engine."""

    def build():
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

    def _build(self):
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
