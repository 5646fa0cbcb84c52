"""The sandbox's notifications: orders placed (or cancelled) on demand, and the signed
notification it sends about them, so that the immediate pull is tested without Shopify.

A sandbox connection takes notifications once its ``credentials`` hold a
``notification_secret``. A notification is ``POST``ed with the headers
``X-Sandbox-Hmac-Sha256`` (base64 of the HMAC-SHA256 of the raw body with the secret),
``X-Sandbox-Event-Id`` and ``X-Sandbox-Topic`` (``orders/create``, ``orders/updated``,
``orders/cancelled``) and the body ``{"order_id": "<external order id>"}``.
"""

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from ..db import write_transaction
from ..timeutil import format_ms, now_ms
from .base import MarketplaceRejection, Notification
from .models import SandboxOrder

SIGNATURE_HEADER = "X-Sandbox-Hmac-Sha256"
EVENT_HEADER = "X-Sandbox-Event-Id"
TOPIC_HEADER = "X-Sandbox-Topic"
TOPICS = ("orders/create", "orders/updated", "orders/cancelled")
MAX_HEADER_LENGTH = 200


def sign(secret: str, raw_body: bytes) -> str:
    """The ``X-Sandbox-Hmac-Sha256`` of ``raw_body``: base64 of its HMAC-SHA256."""
    digest = hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_HEADER_LENGTH:
        return None
    return value.strip()


def _body_invalid(message):
    return MarketplaceRejection(message, code="NOTIFICATION_BODY_INVALID")


class SandboxNotifications:
    """The notification half of ``SandboxConnector`` (a mixin: it uses the sandbox's
    state helpers)."""

    def notification_secret(self) -> str | None:
        raw = self.connection.credentials
        try:
            credentials = json.loads(raw) if raw else {}
        except ValueError:
            credentials = {}
        secret = credentials.get("notification_secret") if isinstance(credentials, dict) else None
        return secret if isinstance(secret, str) and secret else None

    def verify_notification(self, headers: Mapping[str, str], raw_body: bytes) -> Notification:
        secret = self.notification_secret()
        if secret is None:
            raise MarketplaceRejection(
                "This sandbox connection has no notification_secret: it takes no notifications.",
                code="NOTIFICATIONS_UNSUPPORTED",
            )
        given = _header(headers, SIGNATURE_HEADER) or ""
        # compared in constant time, whatever was given (a missing one as an empty one)
        if not hmac.compare_digest(given.encode("utf-8"), sign(secret, raw_body).encode("ascii")):
            raise MarketplaceRejection(
                f"The {SIGNATURE_HEADER} signature is missing or wrong.",
                code="NOTIFICATION_SIGNATURE_INVALID",
            )
        event_id, topic = _header(headers, EVENT_HEADER), _header(headers, TOPIC_HEADER)
        if event_id is None:
            raise _body_invalid(f"{EVENT_HEADER} is required (1 to {MAX_HEADER_LENGTH} chars).")
        if topic not in TOPICS:
            raise _body_invalid(f"{TOPIC_HEADER} must be one of {', '.join(TOPICS)}.")
        try:
            body = json.loads(raw_body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise _body_invalid("The body is not JSON.") from None
        order_id = body.get("order_id") if isinstance(body, dict) else None
        if not isinstance(order_id, str) or not 1 <= len(order_id) <= MAX_HEADER_LENGTH:
            raise _body_invalid('The body must be {"order_id": "<external order id>"}.')
        return Notification(event_id=event_id, topic=topic, order_ids=[order_id])

    def fetch_order(self, external_id: str) -> dict[str, Any] | None:
        if external_id.upper().startswith("UNAVAILABLE"):
            self._check_reachable({"external_order_id": external_id})
        row = SandboxOrder.get_or_none(
            (SandboxOrder.connection_id == self.connection.id)
            & (SandboxOrder.external_order_id == external_id)
        )
        return None if row is None else row.payload

    # orders placed and cancelled on demand (tests, benchmarks, demos) ---------------------

    def place_order(
        self, line_items: list[dict[str, Any]] | None = None, fulfillment_method: str = "FBM"
    ) -> dict[str, Any]:
        """A new order on the sandbox marketplace, now (``line_items``: ``[{sku,
        quantity}]``; by default the generated ones); returns it in the import shape. The
        cursor pull sees it as well."""
        now = now_ms()
        with write_transaction():
            connection = self._locked_connection()
            state = dict(connection.state or {})
            sequence = int(state.get("sequence", 0)) + 1
            products = self._products()
            if not products:
                if line_items is None:
                    raise MarketplaceRejection(
                        "The tenant has no active products to order.", code="NO_PRODUCTS"
                    )
                products = [SimpleNamespace(sku=line_items[0]["sku"], title="", cost_price=None)]
            payload = self._generate(sequence, products, now, backfill=False)
            if line_items is not None:
                payload["line_items"] = [
                    self._line(payload["external_order_id"], position, line)
                    for position, line in enumerate(line_items, start=1)
                ]
                total = sum(Decimal(str(line["line_total"])) for line in payload["line_items"])
                payload["total_amount"] = float(total)
            payload["fulfillment_method"] = fulfillment_method
            payload["created_at"] = format_ms(now)
            SandboxOrder.create(
                connection_id=self.connection.id,
                external_order_id=payload["external_order_id"],
                sequence=sequence,
                revision=self._bump(state),
                status="pending",
                fulfillment_method=fulfillment_method,
                payload=payload,
                created_at=now,
                updated_at=now,
            )
            state["sequence"] = sequence
            self._save_state(state)
        return payload

    def _line(self, external_id, position, line):
        unit_price = float(line.get("unit_price", 10.0))
        quantity = int(line["quantity"])
        return {
            "external_line_item_id": f"{external_id}-{position}",
            "sku": line["sku"],
            "title": line.get("title") or line["sku"],
            "quantity": quantity,
            "unit_price": unit_price,
            "line_total": float(Decimal(str(unit_price)) * quantity),
        }

    def cancel_order(self, external_id: str) -> dict[str, Any]:
        """The buyer cancels ``external_id`` on the sandbox marketplace; returns it."""
        now = now_ms()
        with write_transaction():
            connection = self._locked_connection()
            state = dict(connection.state or {})
            known = self._known(external_id)
            if known is None:
                raise MarketplaceRejection("No such sandbox order.", code="ORDER_NOT_FOUND")
            if known.status != "cancelled":
                self._change(state, known, "cancelled", now)
                self._save_state(state)
            return known.payload
