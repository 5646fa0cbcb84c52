"""Sandbox orders and their signed notifications (DESIGN 13), for tests and benchmarks.

``place_order`` creates an order on a sandbox connection's marketplace (the cursor pull
sees it too); ``signed`` builds the headers and body of the notification the sandbox would
send about it; ``place_and_notify`` does both and POSTs the notification to a URL.
"""

import json
import uuid

import requests

from commerce_api.marketplaces.models import MarketplaceConnection
from commerce_api.marketplaces.sandbox import SandboxConnector
from commerce_api.marketplaces.sandbox_notifications import sign
from commerce_api.marketplaces.services import connect_marketplace

SECRET = "sandbox-notification-secret-0123456789"
QUIET = {"initial_orders": 0, "orders_per_pull": 0}


def connect_notified(tenant_id, marketplace="shopify_eu", secret=SECRET, **settings):
    """A quiet sandbox connection (it emits no orders of its own) that takes notifications."""
    return connect_marketplace(
        tenant_id,
        marketplace,
        "sandbox",
        settings={**QUIET, **settings},
        credentials={"notification_secret": secret} if secret else None,
        created_by="test",
    )


def sandbox(connection_id):
    connection = MarketplaceConnection.get_by_id(connection_id)
    return SandboxConnector(connection, connection.settings or {})


def place_order(connection_id, line_items=None, fulfillment_method="FBM"):
    """A new sandbox order (``line_items``: ``[{sku, quantity}]``); returns it."""
    return sandbox(connection_id).place_order(line_items, fulfillment_method)


def cancel_order(connection_id, external_id):
    return sandbox(connection_id).cancel_order(external_id)


def signed(external_id, secret=SECRET, topic="orders/create", event_id=None, signature=None):
    """``(headers, body)`` of the sandbox's notification about ``external_id``
    (``signature``: sent instead of the right one; ``""``: none)."""
    body = json.dumps({"order_id": external_id}).encode()
    headers = {
        "Content-Type": "application/json",
        "X-Sandbox-Event-Id": event_id or str(uuid.uuid4()),
        "X-Sandbox-Topic": topic,
    }
    signature = sign(secret, body) if signature is None else signature
    if signature:
        headers["X-Sandbox-Hmac-Sha256"] = signature
    return headers, body


def notification_path(connection_id):
    return f"/api/marketplaces/{connection_id}/notifications"


def place_and_notify(base_url, connection_id, line_items=None, secret=SECRET, timeout=5):
    """Place a sandbox order and POST its signed ``orders/create`` to the server at
    ``base_url``; returns ``(order, response)``."""
    order = place_order(connection_id, line_items)
    headers, body = signed(order["external_order_id"], secret)
    response = requests.post(
        base_url + notification_path(connection_id), data=body, headers=headers, timeout=timeout
    )
    return order, response
