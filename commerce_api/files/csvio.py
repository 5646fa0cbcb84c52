"""CSV as the API's files speak it: reading what spreadsheets write, writing what they read.

Reading: UTF-8 with or without a byte-order mark, ``,`` ``;`` or tab separators (told by
the header line), ``\\n`` or ``\\r\\n`` line ends, quoted fields over several lines; the text
arrives in parts (``iter_records``), so a 50 MB file is never held whole.

Writing: ``,`` separators, ``\\r\\n`` line ends (RFC 4180), and cells that a spreadsheet
would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return)
written with a leading ``'`` (OWASP's advice); reading takes that quote off again, so a
file round-trips. Numbers are never quoted: ``-5`` stays a number.

Cells and fields: a cell's text becomes the JSON value the API's schema loads
(``cell_value``): numbers for number fields, ``true``/``false`` for booleans, a list of
scalars joined by ``|``, nested objects as JSON, and an empty cell as null (or an empty
list); ``cell_text`` is the reverse.
"""

import codecs
import csv
import io
import json
from collections.abc import Iterable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

import marshmallow as ma

SEPARATORS = (",", ";", "\t")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
LIST_SEPARATOR = "|"


class CsvError(ValueError):
    """A file that cannot be read as CSV at all (the whole file is refused)."""


def lines(parts: Iterable[bytes]) -> Iterator[str]:
    """Text lines (with their ends) of UTF-8 ``parts``, a byte-order mark dropped."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="strict")
    pending = ""
    try:
        for part in parts:
            pending += decoder.decode(part)
            *complete, pending = pending.split("\n")
            for line in complete:
                yield line + "\n"
        pending += decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise CsvError(f"The file is not UTF-8 text: {exc.reason}.") from None
    if pending:
        yield pending


def separator_of(header_line: str) -> str:
    """The separator the header line uses most (outside quotes): ``,``, ``;`` or tab."""
    counts = dict.fromkeys(SEPARATORS, 0)
    quoted = False
    for char in header_line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in counts:
            counts[char] += 1
    best = max(SEPARATORS, key=lambda sep: counts[sep])
    return best if counts[best] else ","


def iter_records(parts: Iterable[bytes]) -> Iterator[list[str]]:
    """The records of a CSV file given in byte ``parts``: the header first; blank lines
    are skipped."""
    source = lines(parts)
    first = next(source, None)
    if first is None:
        return
    reader = csv.reader(_chain(first, source), delimiter=separator_of(first), strict=True)
    try:
        for record in reader:
            if record and any(cell.strip() for cell in record):
                yield record
    except csv.Error as exc:
        raise CsvError(f"Line {reader.line_num}: {exc}.") from None


def _chain(first, rest):
    yield first
    yield from rest


# Writing --------------------------------------------------------------------------------


def neutralise(text: str) -> str:
    """``text`` as a cell no spreadsheet runs as a formula (a leading ``'`` when needed;
    a text that starts with ``'`` before such a character gets one more, so that reading
    gives it back)."""
    if text and (
        text[0] in FORMULA_STARTS
        or (text[0] == "'" and len(text) > 1 and text[1] in (*FORMULA_STARTS, "'"))
    ):
        return "'" + text
    return text


def restore(text: str) -> str:
    """The reverse of ``neutralise``."""
    if len(text) > 1 and text[0] == "'" and text[1] in (*FORMULA_STARTS, "'"):
        return text[1:]
    return text


def csv_line(cells: Iterable[str]) -> str:
    """One CSV record, ``\\r\\n`` terminated."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow(list(cells))
    return buffer.getvalue()


def _number_text(value):
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)  # the shortest text that reads back as the same float
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def cell_text(value: Any) -> str:
    """A JSON value of the API as a cell: null as empty, numbers as they are, lists of
    scalars joined by ``|``, objects and lists of objects as JSON, text neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return _number_text(value)
    if isinstance(value, list):
        if all(
            isinstance(item, str | int | float) and not isinstance(item, bool) for item in value
        ):
            return neutralise(LIST_SEPARATOR.join(str(item) for item in value))
        return neutralise(json.dumps(value, separators=(",", ":"), sort_keys=True))
    if isinstance(value, dict):
        return neutralise(json.dumps(value, separators=(",", ":"), sort_keys=True))
    return neutralise(str(value))


# Reading cells --------------------------------------------------------------------------


class CellError(ValueError):
    """A cell whose text is not a value of its field's type."""


def _number(text, integer):
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise CellError("Not a valid number.") from None
    if not number.is_finite():
        raise CellError("Not a valid number.")
    if integer:
        if number != number.to_integral_value():
            raise CellError("Not a valid integer.")
        return int(number)
    return number


def _is_integer_field(field):
    return isinstance(field, ma.fields.Integer)


def _is_number_field(field):
    # the API's StrictDecimal is a plain Field subclass with ``places``
    return isinstance(field, ma.fields.Number) or hasattr(field, "places")


def cell_value(field: ma.fields.Field, text: str) -> Any:
    """The JSON value of ``text`` for a schema field (raises ``CellError``)."""
    text = restore(text)
    if isinstance(field, ma.fields.List):
        if not text.strip():
            return []
        inner = field.inner
        if isinstance(inner, ma.fields.Nested | ma.fields.Dict):
            return _json(text)
        return [cell_value(inner, item.strip()) for item in text.split(LIST_SEPARATOR)]
    if not text.strip():
        return None
    if isinstance(field, ma.fields.Nested | ma.fields.Dict):
        return _json(text)
    if isinstance(field, ma.fields.Boolean):
        lowered = text.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise CellError("Not a valid boolean (true or false).")
    if _is_integer_field(field):
        return _number(text.strip(), integer=True)
    if _is_number_field(field):
        # exact: the API's number fields take a Decimal as they take a JSON number
        return _number(text.strip(), integer=False)
    return text


def _json(text):
    try:
        return json.loads(text)
    except ValueError:
        raise CellError("Not valid JSON.") from None
