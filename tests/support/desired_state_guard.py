"""The desired-state rule, checked on every test that talks HTTP (issue 37).

Every change of what a listing should show (a product's fields or status, its stock, a
bundle's components) must mark the product's listings ``pending`` in the same transaction
(``products.pending_listings.mark_listings_pending``), or the marketplace keeps showing
the old state until something else happens to push it. The guard watches the statements
the test's SQLite connections run while they serve a request (``sqlite3`` trace
callbacks: peewee queries, ``sql.Statement`` and ``executemany`` alike) and records
every transaction that wrote such a row and committed without the marking UPDATE. On
PostgreSQL (no trace callback) it watches nothing: the SQLite pass enforces the rule for
both.

A new product (an INSERT, with its bundle components) has no listing yet: it needs no
marking.
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
# products.pending_listings' marking UPDATE
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
        found = DESIRED_WRITE.match(sql)
        marks = MARK.match(sql) is not None
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
            transaction.tables.add(next(name for name in found.groups() if name))
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
