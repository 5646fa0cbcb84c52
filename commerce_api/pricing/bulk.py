"""Bulk statements of the repricing job: one ``executemany`` per table and chunk.

A repricing chunk writes hundreds of rows per table; each write here is one prepared
statement executed for every row (``cursor.executemany``), built once per engine, so the
number of statements a chunk issues does not depend on how many rows it writes.
"""

from collections.abc import Iterable, Sequence
from typing import Any

import peewee

from ..db import db
from ..sql import PreparedQuery

_statements = {}


class PreparedIn:
    """A read whose last condition is ``column IN (...)``, compiled once per list length.

    Peewee spends ~30 ms composing a query with 500 values; a chunk's reads are built
    once per length (a job sees two: full chunks and the last one) and then run as plain
    SQL with parameters, each value converted as its field would (``PreparedQuery``).
    ``builder(*fixed, values)`` must bind the fixed parameters before the list.
    """

    def __init__(self, builder, nfixed):
        self.builder = builder
        self.nfixed = nfixed
        self._by_length = {}

    def _prepared(self, length):
        prepared = self._by_length.get(length)
        if prepared is None:
            nfixed = self.nfixed

            def build(*placeholders):
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


def _columns(model):
    return tuple(model._meta.sorted_fields)


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


def _values(model, fields, row):
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


def _insert_sql(model, upsert_keys=None, newer_column=None):
    key = (id(db.obj), model, upsert_keys, newer_column)
    sql = _statements.get(key)
    if sql is None:
        table = model._meta.table_name
        fields = _columns(model)
        columns = ", ".join(f'"{f.column_name}"' for f in fields)
        marks = ", ".join([db.param] * len(fields))
        sql = f'INSERT INTO "{table}" ({columns}) VALUES ({marks})'
        if upsert_keys:
            keys = [model._meta.fields[name].column_name for name in upsert_keys]
            updates = ", ".join(
                f'"{f.column_name}" = excluded."{f.column_name}"'
                for f in fields
                if f.column_name not in keys
            )
            sql += f" ON CONFLICT ({', '.join(f'{k}' for k in keys)}) DO UPDATE SET {updates}"
            if newer_column:
                # keep the stored row when it is newer than the incoming one
                sql += f' WHERE excluded."{newer_column}" >= "{table}"."{newer_column}"'
        _statements[key] = sql
    return sql


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
    fields = _columns(model)
    params = [_values(model, fields, row) for row in rows]
    sql = _insert_sql(model, tuple(upsert_keys) if upsert_keys else None, newer_column)
    if len(params) == 1:
        db.execute_sql(sql, params[0])
    else:
        db.cursor().executemany(sql, params)
    return len(params)


def update_rows(
    model: type[peewee.Model], set_fields: Sequence[str], rows: Sequence[dict[str, Any]]
) -> int:
    """``UPDATE model SET <set_fields> WHERE id = ?`` for each row, one ``executemany``."""
    if not rows:
        return 0
    if db.transaction_depth() == 0:
        raise RuntimeError("bulk writes belong inside the chunk's transaction")
    key = (id(db.obj), model, "update", tuple(set_fields))
    sql = _statements.get(key)
    fields = [model._meta.fields[name] for name in set_fields]
    if sql is None:
        assignments = ", ".join(f'"{f.column_name}" = {db.param}' for f in fields)
        sql = _statements[key] = (
            f'UPDATE "{model._meta.table_name}" SET {assignments} WHERE "id" = {db.param}'
        )
    params = [[f.db_value(row[f.name]) for f in fields] + [row["id"]] for row in rows]
    if len(params) == 1:
        db.execute_sql(sql, params[0])
    else:
        db.cursor().executemany(sql, params)
    return len(params)
