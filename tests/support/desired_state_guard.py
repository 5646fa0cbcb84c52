"""The desired-state rule, checked on every test that talks HTTP (issue 37).

Every change of what a listing should show (a product's fields or status, its stock, a
bundle's components, the listing's own desired-state columns) must mark the listings
``pending`` in the same transaction (``products.desired_state``, the one module that calls
``mark_listings_pending``), or the marketplace keeps showing
the old state until something else happens to push it. The guard watches the statements
the test's SQLite connections run while they serve a request (``sqlite3`` trace
callbacks: peewee queries, ``sql.Statement`` and ``executemany`` alike) and records
every transaction that wrote such a row and committed without the marking UPDATE. On
PostgreSQL (no trace callback) it watches nothing: the SQLite pass enforces the rule for
both.

A new product (an INSERT, with its bundle components) has no listing yet: it needs no
marking. A listing UPDATE that sets ``sync_status`` itself (an outcome recorded from the
marketplace, a price accepted, or a write that makes the listing pending in the same
statement) is its own marking.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

import pytest
from flask import request_started, request_tearing_down

from commerce_api.db import db, is_postgres

# a write to a row listings are pushed from
DESIRED_WRITE = re.compile(
    r'^\s*(?:UPDATE\s+"(product|stock|bundle_component)"'
    r'|DELETE\s+FROM\s+"(product|stock|bundle_component)"'
    r'|INSERT\s+INTO\s+"(stock|bundle_component)")',
    re.IGNORECASE,
)
# a new product: no listing has it yet (its components come with it)
NEW_PRODUCT = re.compile(r'^\s*INSERT\s+INTO\s+"product"', re.IGNORECASE)
# a listing's own columns its desired state is made of (DESIGN: listing PATCH)
LISTING_DESIRED = frozenset(
    (
        "price",
        "stock_buffer",
        "max_quantity",
        "allocation_pct",
        "fixed_quantity",
        "warehouse_ids",
        "status",
    )
)
LISTING_UPDATE = re.compile(r'^\s*UPDATE\s+"listing"\s+SET\s+(.*)$', re.IGNORECASE | re.DOTALL)
ASSIGNED = re.compile(r'^\s*(?:"listing"\.)?"(\w+)"\s*=')
# products.desired_state's marking UPDATE
MARK = re.compile(r'^\s*UPDATE\s+"listing"\s+SET\s+"version"\s*=\s*"version"\s*\+\s*1', re.I)


@dataclass
class _Transaction:
    tables: set[str] = field(default_factory=set)
    marked: bool = False
    new_product: bool = False
    statements: list[str] = field(default_factory=list)


class DesiredStateGuard:
    """Records, per connection, what each transaction wrote and whether it marked."""

    def __init__(self) -> None:
        self.violations: list[str] = []
        self.serving = threading.local()  # .on: this thread is handling a request
        self._open: dict[int, _Transaction | None] = {}
        self._lock = threading.Lock()
        self.connections: list = []

    def watch(self, conn) -> None:
        key = id(conn)
        self._open[key] = None
        conn.set_trace_callback(lambda sql: self.seen(key, sql))
        self.connections.append(conn)

    def stop(self) -> None:
        for conn in self.connections:
            try:
                conn.set_trace_callback(None)
            except Exception:  # noqa: BLE001 (a connection closed meanwhile)
                pass
        self.connections.clear()

    def seen(self, key: int, sql: str) -> None:
        """One statement run on connection ``key``."""
        if not getattr(self.serving, "on", False):
            return  # the test's own set-up writes rows as it likes
        head = sql.lstrip()[:20].upper()
        if head.startswith("BEGIN"):
            self._open[key] = _Transaction()
            return
        if head.startswith(("COMMIT", "END")):
            self._close(key, commit=True)
            return
        if head.startswith("ROLLBACK") and not head.startswith("ROLLBACK TO"):
            self._close(key, commit=False)
            return
        marks = MARK.match(sql) is not None
        found = DESIRED_WRITE.match(sql) or (None if marks else listing_write(sql))
        if NEW_PRODUCT.match(sql) and self._open.get(key) is not None:
            self._open[key].new_product = True
        if not found and not marks:
            return
        transaction = self._open.get(key)
        if transaction is None:  # a statement on its own is its own transaction
            transaction = _Transaction()
            self._open[key] = transaction
            self._note(transaction, found, marks, sql)
            self._close(key, commit=True)
            return
        self._note(transaction, found, marks, sql)

    @staticmethod
    def _note(transaction, found, marks, sql):
        if found:
            table = found if isinstance(found, str) else next(n for n in found.groups() if n)
            transaction.tables.add(table)
            transaction.statements.append(sql[:200])
        transaction.marked = transaction.marked or marks

    def _close(self, key, commit):
        transaction = self._open.get(key)
        self._open[key] = None
        if transaction is None or not commit or transaction.marked:
            return
        if transaction.new_product:  # a bundle created with its components
            transaction.tables.discard("bundle_component")
        if transaction.tables:
            with self._lock:
                self.violations.append(
                    f"wrote {sorted(transaction.tables)} without marking listings pending: "
                    + " | ".join(transaction.statements[:3])
                )


def assigned_columns(sql: str) -> set[str]:
    """The columns an ``UPDATE "listing" SET ...`` assigns (its SET list split at the
    commas outside parentheses and quotes); empty for any other statement."""
    match = LISTING_UPDATE.match(sql)
    if not match:
        return set()
    text, parts, depth, quoted, start = match.group(1), [], 0, False, 0
    upper = text.upper()
    for index, char in enumerate(text):
        if char == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
        elif depth == 0 and char == " " and upper.startswith(" WHERE ", index):
            break
    else:
        index = len(text)
    parts.append(text[start:index])
    return {m.group(1) for m in map(ASSIGNED.match, parts) if m}


def listing_write(sql: str) -> str | None:
    """``"listing"`` when ``sql`` changes a listing's desired-state columns without
    setting its ``sync_status`` in the same statement; None otherwise."""
    columns = assigned_columns(sql)
    if columns & LISTING_DESIRED and "sync_status" not in columns:
        return "listing"
    return None


def watching(app) -> DesiredStateGuard | None:
    """A guard on every SQLite connection the database opens from now on (and on this
    thread's open one); None on PostgreSQL."""
    if is_postgres():
        return None
    guard = DesiredStateGuard()
    database = db.obj
    original = database._initialize_connection

    def initialize(conn):
        original(conn)
        guard.watch(conn)

    def started(sender, **extra):
        guard.serving.on = True

    def finished(sender, **extra):
        guard.serving.on = False

    database._initialize_connection = initialize
    request_started.connect(started, app)
    request_tearing_down.connect(finished, app)

    def restore():
        database._initialize_connection = original
        request_started.disconnect(started, app)
        request_tearing_down.disconnect(finished, app)

    guard.restore = restore
    if not database.is_closed():
        guard.watch(database.connection())
    return guard


@pytest.fixture(autouse=True)
def desired_state_guard(request):
    """After a test that used the HTTP client: no transaction changed what listings show
    without marking them pending."""
    if "client" not in request.fixturenames:
        yield None
        return
    app = request.getfixturevalue("app")
    guard = watching(app)
    yield guard
    if guard is None:
        return
    guard.stop()
    guard.restore()
    assert guard.violations == [], guard.violations
