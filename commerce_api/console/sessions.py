"""Console sessions: open, find, keep alive, end. No Flask here.

A session is a row found by the SHA-256 of the cookie's random token. It ends after
``idle_seconds`` without a request, at ``expires_at`` whatever the activity, and at
sign-out (``revoked_at``); an ended session is never found again.
"""

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from ..db import write_transaction
from ..timeutil import now_ms
from .models import ConsoleLogin, ConsoleSession

TOUCH_INTERVAL_MS = 30_000  # last_seen_at is written at most this often per session


@dataclass(frozen=True)
class OpenedSession:
    token: str  # goes into the cookie, never stored
    session: ConsoleSession


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def open_session(
    *,
    tenant_id: str,
    kind: str,
    principal: str,
    credential: str,
    max_seconds: int,
    tenants: list[str] | None = None,
    expires_at: int | None = None,
) -> OpenedSession:
    """A new session; ``expires_at`` (epoch ms) caps the absolute lifetime further (a
    user JWT's own expiry)."""
    token = secrets.token_urlsafe(32)
    now = now_ms()
    end = now + max_seconds * 1000
    if expires_at is not None:
        end = min(end, expires_at)
    with write_transaction():
        session = ConsoleSession.create(
            id=token_hash(token),
            tenant_id=tenant_id,
            kind=kind,
            principal=principal[:200],
            credential=credential,
            tenants=tenants,
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            last_seen_at=now,
            expires_at=end,
        )
    return OpenedSession(token=token, session=session)


def find_session(token: str | None, idle_seconds: int) -> ConsoleSession | None:
    """The live session of a cookie token, or None (unknown, signed out, idle or over)."""
    if not token or len(token) > 200:
        return None
    session = ConsoleSession.get_or_none(ConsoleSession.id == token_hash(token))
    if session is None or session.revoked_at is not None:
        return None
    now = now_ms()
    if now >= session.expires_at or now - session.last_seen_at >= idle_seconds * 1000:
        return None
    if now - session.last_seen_at >= TOUCH_INTERVAL_MS:
        with write_transaction():
            ConsoleSession.update(last_seen_at=now).where(ConsoleSession.id == session.id).execute()
    return session


def choose_tenant(session: ConsoleSession, tenant_id: str) -> bool:
    """Point a user's session at one of its tenants; False when it is not one of them."""
    if tenant_id not in (session.tenants or []):
        return False
    with write_transaction():
        ConsoleSession.update(tenant_id=tenant_id).where(ConsoleSession.id == session.id).execute()
    return True


def end_session(session_id: str) -> None:
    """Sign out: the session is refused from now on, on every process."""
    with write_transaction():
        ConsoleSession.update(revoked_at=now_ms()).where(
            (ConsoleSession.id == session_id) & ConsoleSession.revoked_at.is_null()
        ).execute()


def purge_ended(older_than_ms: int) -> int:
    """Delete sessions that ended before ``older_than_ms``, and provider sign-ins started
    before it (housekeeping); returns the sessions deleted."""
    with write_transaction():
        ConsoleLogin.delete().where(ConsoleLogin.created_at < older_than_ms).execute()
        return (
            ConsoleSession.delete()
            .where(
                (ConsoleSession.expires_at < older_than_ms)
                | (ConsoleSession.revoked_at < older_than_ms)
                | (ConsoleSession.last_seen_at < older_than_ms)
            )
            .execute()
        )


def csrf_matches(expected: str | None, given: str | None) -> bool:
    return bool(expected) and bool(given) and hmac.compare_digest(expected, given)
