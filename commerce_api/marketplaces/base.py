"""The connector interface every marketplace adapter implements.

A connector talks to one marketplace on behalf of one connection (one tenant). It knows
nothing of our database transactions: callers read what they need, call the connector with
no write transaction open, then apply the outcome in a transaction of their own.

Failures are reported with two exceptions only:
- ``MarketplaceRejection``: the marketplace answered and said no (a final answer);
- ``MarketplaceUnavailable``: no usable answer (refused connection, time-out, 5xx, 429,
  a body that is not the contract's JSON); trying again later may work.
"""

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


class ConnectorError(Exception):
    """Base class of connector failures."""

    def __init__(self, message, code=None, details=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details or {}


class MarketplaceRejection(ConnectorError):
    """The marketplace refused the request; ``code`` is the marketplace's reason."""


class MarketplaceUnavailable(ConnectorError):
    """The marketplace could not be reached or gave no usable answer."""

    def __init__(self, message, code="UNREACHABLE", details=None, retry_after=None):
        super().__init__(message, code, details)
        self.retry_after = retry_after


@dataclass
class OrderPage:
    """One page of new and changed orders, in the import shape (docs/connector-http.md)."""

    orders: list
    cursor: str | None  # give it back to fetch_orders to continue after this page
    has_more: bool = False
    errors: list = field(default_factory=list)


@dataclass
class ListingResult:
    """One listing's outcome of a batch push or of a submission check.

    ``status``: ``accepted`` (the marketplace shows the values: ``answer`` is the listing
    as ``push_product`` returns it), ``submitted`` (accepted for processing, the result is
    read later: ``submission`` is what to read it by; in a check: not processed yet),
    ``mismatch`` (the marketplace's quantity was not the one we last set, so nothing was
    written: ``answer`` is ``{quantity, refs}`` as the marketplace shows it now, and the
    listing is pushed again from our state), ``rejected`` (a final no, with the
    marketplace's code and message) or ``unavailable`` (try again later).
    """

    status: str
    answer: dict | None = None
    submission: dict | None = None
    error_code: str | None = None
    error_message: str | None = None
    retry_after: float | None = None


def push_each(
    items: Sequence[dict[str, Any]], push: Callable[[dict[str, Any]], ListingResult]
) -> list[ListingResult]:
    """``push(item)`` for each item in turn, a rejection or an unavailable answer being that
    item's result (a batch that a connector sends as single calls)."""
    results = []
    for item in items:
        try:
            results.append(push(item))
        except MarketplaceRejection as exc:
            results.append(
                ListingResult("rejected", error_code=exc.code, error_message=exc.message)
            )
        except MarketplaceUnavailable as exc:
            results.append(
                ListingResult(
                    "unavailable",
                    error_code=exc.code,
                    error_message=exc.message,
                    retry_after=exc.retry_after,
                )
            )
    return results


@dataclass(frozen=True)
class Notification:
    """A marketplace's notification, verified: its id (duplicates share it), its topic and
    the orders it names (the body is trusted no further)."""

    event_id: str
    topic: str
    order_ids: list[str]


@dataclass
class SubmissionCheck:
    """What ``check_submissions`` found: a result per item, and ``notes`` on what the
    marketplace reported that names nothing we sent (``{sku, code, message, ...}``)."""

    results: list
    notes: list = field(default_factory=list)


class Connector(ABC):
    """What a marketplace adapter does. Every method may raise the two errors above."""

    name = "base"
    # calls leave the process (counted against the tenant's cap of outbound calls)
    remote = True
    # listings one ``push_listings`` call takes (1: one ``push_product`` per listing)
    batch_size = 1

    def __init__(self, connection, settings=None):
        self.connection = connection
        self.settings = settings or {}
        self.session = None  # the keep-alive pool of the connection (``gateway``), if any

    @abstractmethod
    def push_product(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Create or update the product's listing; returns ``{external_id, status, price,
        currency, quantity}``. ``idempotency_key`` (``<listing id>:<version>`` for listing
        pushes) lets the marketplace recognise a push it has already taken."""

    @abstractmethod
    def confirm_shipment(self, order: dict[str, Any], shipment: dict[str, Any]) -> dict[str, Any]:
        """Confirm a shipment of ``order``; returns ``{confirmation_id}``."""

    @abstractmethod
    def request_cancellation(self, order: dict[str, Any], reason: str) -> dict[str, Any]:
        """Ask to cancel ``order``; returns ``{status: approved|rejected|pending, message}``."""

    @abstractmethod
    def fetch_orders(self, cursor: str | None) -> OrderPage:
        """New and changed orders after ``cursor`` (None: from the beginning): an OrderPage."""

    def push_price(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Set the listing's price: ``product`` is the ``push_product`` payload carrying the
        new ``price``; returns what ``push_product`` returns."""
        return self.push_product(product, idempotency_key=idempotency_key)

    def push_listings(self, items: Sequence[dict[str, Any]]) -> list[ListingResult]:
        """Push many listings of this connection at once: ``items`` are ``{payload,
        idempotency_key}`` (``payload`` the ``push_product`` body); one ``ListingResult``
        per item, in order. Only an answer about the whole batch (the marketplace is
        unreachable) raises. The default pushes them one by one."""
        return push_each(
            items,
            lambda item: ListingResult(
                "accepted", answer=self.push_product(item["payload"], item.get("idempotency_key"))
            ),
        )

    def check_submissions(self, items: Sequence[dict[str, Any]]) -> SubmissionCheck:
        """Read the results of listings ``submitted`` earlier: ``items`` are ``{sku,
        submission}``; one ``ListingResult`` per item (``submitted``: not processed yet)."""
        raise MarketplaceUnavailable(
            f"The {self.name} connector submits nothing for later processing.",
            code="NOT_SUPPORTED",
        )

    def verify_notification(self, headers: Mapping[str, str], raw_body: bytes) -> Notification:
        """Check a notification the marketplace sent (its signature over ``raw_body``) and
        read what it names; raises ``MarketplaceRejection`` when it is not one."""
        raise MarketplaceRejection(
            "this connector takes no notifications", code="NOTIFICATIONS_UNSUPPORTED"
        )

    def check(self) -> dict[str, Any]:
        """One cheap authenticated call: ``{ok, detail}`` (raises the two errors above)."""
        return {"ok": True, "detail": f"The {self.name} connector has nothing to check."}

    @abstractmethod
    def fetch_competitor_prices(self, skus: Sequence[str]) -> list[dict[str, Any]]:
        """Competitor offers for ``skus``, checked by ``offers.normalize_offers``: a list of
        ``{sku, marketplace, competitor, price, shipping, landed_price, currency,
        is_buy_box_winner, condition, observed_at}`` (Decimal money, epoch-ms time)."""

    @abstractmethod
    def fetch_inventory(self) -> list[dict[str, Any]]:
        """Stock the marketplace holds in its own warehouses (FBA/FBS): a list of
        ``{sku, on_hand, warehouse_type}``."""

    @abstractmethod
    def fetch_reviews(self, skus: Sequence[str], since: datetime | None) -> list[dict[str, Any]]:
        """Product reviews of ``skus`` created at or after ``since`` (an aware datetime, or
        None for all): a list of ``{id, sku, rating, title, text, created_at}`` (``rating``
        1-5 or None, ``title`` may be None, ``created_at`` an ISO 8601 string or None)."""
