"""Checking what a connector answers, before anything stores it.

A marketplace's answer is held to the rules of our own request bodies (the marshmallow
schemas and strict number fields of the API): a listing (``push_product`` / ``push_price``),
a page of orders (``fetch_orders``; each order is checked against the import shape by the
orders domain before any of the page is applied) and marketplace stock
(``fetch_inventory``). An answer with anything out of line (NaN, an infinity, 1e20, a
50-character currency, an object where a number belongs, a negative or absurd quantity,
NUL in a string) is not a usable answer: ``MarketplaceUnavailable`` with code
``INVALID_RESPONSE``, and nothing of it is kept. Competitor offers are checked by
``offers.normalize_offers`` the same way.

``get_connector`` hands out every connector wrapped in ``CheckedConnector``, so no caller
can reach an unchecked answer.
"""

from typing import Any

import marshmallow as ma

from .base import ListingResult, MarketplaceUnavailable, OrderPage, SubmissionCheck
from .schemas import InventoryItemSchema, ListingAnswerSchema, unstorable

MAX_CURSOR_LENGTH = 1000
MAX_INVENTORY_ITEMS = 100_000
MAX_ORDERS_PER_PAGE = 1000


def invalid_answer(
    operation: str, problem: str | None, errors: Any = None, index: int | None = None
) -> MarketplaceUnavailable:
    """The error for an answer that breaks the rules: the marketplace is unavailable."""
    details = {"operation": operation}
    if index is not None:
        details["index"] = index
    if errors:
        details["errors"] = errors
    where = f" (item {index})" if index is not None else ""
    if errors:
        problem = f"{problem} {first_problem(errors)}" if problem else first_problem(errors)
    return MarketplaceUnavailable(
        f"The marketplace's {operation} answer is not valid{where}: {problem}",
        code="INVALID_RESPONSE",
        details=details,
    )


def has_unstorable_text(document: Any) -> bool:
    """True when a string (or key) of a decoded JSON document holds NUL or a lone UTF-16
    surrogate, which no database stores (the same rule as request bodies)."""
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and unstorable(value):
            return True
    return False


_listing_schema = ListingAnswerSchema()
_inventory_schema = InventoryItemSchema()


def check_listing(answer: Any, operation: str = "push_product") -> dict[str, Any]:
    """The checked listing ``{external_id, status, price, currency, quantity}``."""
    if not isinstance(answer, dict):
        raise invalid_answer(operation, "not an object.")
    try:
        data = _listing_schema.load(answer)
    except ma.ValidationError as exc:
        raise invalid_answer(operation, None, exc.messages) from None
    if data.get("status") is None:
        data["status"] = "active"
    return data


def check_inventory(items: Any) -> list[dict[str, Any]]:
    """The checked stock records ``[{sku, on_hand, warehouse_type}]``."""
    if not isinstance(items, list):
        raise invalid_answer("fetch_inventory", "no items list.")
    if len(items) > MAX_INVENTORY_ITEMS:
        raise invalid_answer("fetch_inventory", f"more than {MAX_INVENTORY_ITEMS} items.")
    checked = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise invalid_answer("fetch_inventory", "not an object.", index=index)
        try:
            data = _inventory_schema.load(item)
        except ma.ValidationError as exc:
            raise invalid_answer("fetch_inventory", None, exc.messages, index) from None
        data["warehouse_type"] = data.get("warehouse_type") or "FBA"
        checked.append(data)
    return checked


def check_order_page(page: Any) -> OrderPage:
    """The page's shape: a list of objects and a string cursor (the orders themselves are
    checked against the import shape by ``orders.pulls``)."""
    if not isinstance(page, OrderPage) or not isinstance(page.orders, list):
        raise invalid_answer("fetch_orders", "no orders list.")
    if len(page.orders) > MAX_ORDERS_PER_PAGE:
        raise invalid_answer("fetch_orders", f"more than {MAX_ORDERS_PER_PAGE} orders.")
    for index, order in enumerate(page.orders):
        if not isinstance(order, dict):
            raise invalid_answer("fetch_orders", "an order is not an object.", index=index)
    cursor = page.cursor
    if cursor is not None and (
        not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_LENGTH or "\x00" in cursor
    ):
        raise invalid_answer(
            "fetch_orders", f"next_cursor is not a string of at most {MAX_CURSOR_LENGTH}."
        )
    return page


def first_problem(messages: Any, prefix: str = "") -> str:
    """``field: message`` of the first problem, for the sync history's error message."""
    if isinstance(messages, dict):
        for name, inner in messages.items():
            return first_problem(inner, f"{prefix}{name}." if name != "_schema" else prefix)
    if isinstance(messages, list) and messages:
        return first_problem(messages[0], prefix)
    return f"{prefix.rstrip('.') or 'answer'}: {messages}"


class CheckedConnector:
    """A connector whose answers are checked before any caller sees them."""

    def __init__(self, connector):
        self._connector = connector

    def __getattr__(self, name):  # name, connection, settings, fetch_reviews...
        return getattr(self._connector, name)

    def push_product(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        answer = self._connector.push_product(product, idempotency_key=idempotency_key)
        return check_listing(answer, "push_product")

    def push_price(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        answer = self._connector.push_price(product, idempotency_key=idempotency_key)
        return check_listing(answer, "push_price")

    def fetch_orders(self, cursor: str | None) -> OrderPage:
        return check_order_page(self._connector.fetch_orders(cursor))

    def fetch_inventory(self) -> list[dict[str, Any]]:
        return check_inventory(self._connector.fetch_inventory())

    def push_listings(self, items: list[dict[str, Any]]) -> list[ListingResult]:
        results = self._connector.push_listings(items)
        return _checked_results(results, len(items), "push_listings")

    def check_submissions(self, items: list[dict[str, Any]]) -> SubmissionCheck:
        check = self._connector.check_submissions(items)
        if not isinstance(check, SubmissionCheck):
            raise invalid_answer("check_submissions", "not a SubmissionCheck.")
        check.results = _checked_results(check.results, len(items), "check_submissions")
        return check


RESULT_STATUSES = ("accepted", "submitted", "rejected", "unavailable", "mismatch")


def _checked_results(results: Any, count: int, operation: str) -> list[ListingResult]:
    """One result per item; an accepted one's listing checked as ``push_product``'s (a bad
    one makes that listing unavailable, not the batch)."""
    if not isinstance(results, list) or len(results) != count:
        raise invalid_answer(operation, f"not one result for each of the {count} listings.")
    checked = []
    for result in results:
        if not isinstance(result, ListingResult) or result.status not in RESULT_STATUSES:
            raise invalid_answer(operation, "a result is not a listing result.")
        if result.status == "accepted":
            try:
                result.answer = check_listing(result.answer, operation)
            except MarketplaceUnavailable as exc:
                result = ListingResult(
                    "unavailable", error_code=exc.code, error_message=exc.message
                )
        checked.append(result)
    return checked
