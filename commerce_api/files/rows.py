"""The rows of an import file: parsed by the request schema's fields, keyed, reported."""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ApiError
from .columns import FileType
from .csvio import CellError, cell_value, iter_records

MAX_REPORTED_ERRORS = 1000


@dataclass
class Row:
    number: int  # the row's line in the file's records, the header being row 1
    values: dict[str, Any]  # field -> JSON value of the non-empty or nullable cells
    error: dict[str, Any] | None = None


def row_error(number, column, code, message):
    return {"row": number, "column": column, "code": code, "message": message}


def parse_row(spec: FileType, names: list[str], record: list[str], number: int) -> Row:
    if len(record) != len(names):
        return Row(
            number,
            {},
            row_error(
                number,
                None,
                "CSV_ROW_LENGTH",
                f"{len(record)} cells where the header has {len(names)}.",
            ),
        )
    values = {}
    for name, text in zip(names, record, strict=True):
        schema_field = spec.fields.get(name)
        if schema_field is None:
            continue  # an ignored, read-only column
        try:
            value = cell_value(schema_field, text)
        except CellError as error:
            return Row(number, {}, row_error(number, name, "VALIDATION_ERROR", str(error)))
        if value is None and not schema_field.allow_none and name not in spec.key:
            continue  # an empty cell of a field that cannot be null: not given
        values[name] = value
    for name in spec.key:
        if not values.get(name):
            return Row(number, {}, row_error(number, name, "VALIDATION_ERROR", "Required."))
    return Row(number, values)


def row_key(spec, values):
    if spec.name == "inventory":
        return (values.get("sku"), values.get("warehouse_id") or values.get("warehouse_name"))
    return tuple(values.get(name) for name in spec.key)


def read_rows(spec: FileType, parts: Iterable[bytes]) -> Iterator[Row]:
    """The file's rows, parsed; the header is checked again (the upload checked it)."""
    records = iter_records(parts)
    header = next(records, None)
    if header is None:
        return
    names = spec.check_header(header)
    for number, record in enumerate(records, start=2):
        yield parse_row(spec, names, record, number)


def repeated_keys(spec: FileType, rows: Iterable[Row]) -> set[tuple]:
    """The keys that more than one row names."""
    seen, repeated = set(), set()
    for row in rows:
        if row.error is None:
            key = row_key(spec, row.values)
            if key in seen:
                repeated.add(key)
            seen.add(key)
    return repeated


def validation_errors(number, messages):
    errors = []
    for column, problem in messages.items():
        text = problem
        while isinstance(text, dict | list):
            text = next(iter(text.values()), "") if isinstance(text, dict) else (text or [""])[0]
        errors.append(row_error(number, column, "VALIDATION_ERROR", str(text)))
    return errors


def api_error(number, error: ApiError, column=None):
    details = error.details or {}
    column = column or details.get("field")
    return row_error(number, column, error.code, error.message)


@dataclass
class Outcome:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    failed: int = 0

    def fail(self, *errors):
        self.failed += 1
        for error in errors:
            if len(self.errors) < MAX_REPORTED_ERRORS:
                self.errors.append(error)
