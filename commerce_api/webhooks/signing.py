"""Secrets, signatures and the exact bytes of a delivery.

Two schemes sign every delivery, so receivers can use either:
- GitHub style: ``X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>``, keyed
  with the secret string as shown (``whsec_...``) in UTF-8;
- Standard Webhooks: ``webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{ts}.{body}">``
  keyed with the base64-decoded part after ``whsec_``; several signatures are separated
  by spaces (the old secret signs too during the grace period after a rotation).
"""

import base64
import hashlib
import hmac
import json
import secrets

from ..timeutil import format_ms

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """``whsec_`` + standard base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def event_body(
    event_id: str, event_type: str, created_at: int, tenant_id: str, data_json: str | None
) -> bytes:
    """The delivered body ``{id, type, created_at, tenant_id, data}`` as bytes.

    ``data_json`` is the outbox's stored JSON text of ``data``, spliced in as it is: the
    same event always gives the same bytes, on every retry and redelivery.
    """
    head = json.dumps(
        {
            "id": event_id,
            "type": event_type,
            "created_at": format_ms(created_at),
            "tenant_id": tenant_id,
        },
        separators=(",", ":"),
    )
    return (head[:-1] + ',"data":' + (data_json or "null") + "}").encode("utf-8")


def github_signature(secret: str, body: bytes) -> str:
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return "sha256=" + digest


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret[len(SECRET_PREFIX) :])
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def delivery_headers(
    *,
    body: bytes,
    event_id: str,
    event_type: str,
    delivery_id: str,
    secret: str,
    timestamp: int,
    old_secret: str | None = None,
) -> dict[str, str]:
    """Every header of one attempt (``timestamp``: Unix seconds, fresh per attempt)."""
    signatures = [standard_signature(secret, event_id, timestamp, body)]
    if old_secret:
        signatures.append(standard_signature(old_secret, event_id, timestamp, body))
    return {
        "Content-Type": "application/json",
        "User-Agent": "commerce-api-webhooks/1",
        "X-Service-Event": event_type,
        "X-Service-Delivery": delivery_id,
        "X-Service-Signature": github_signature(secret, body),
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signatures),
    }
