"""``Idempotency-Key`` on POST, with Stripe's semantics.

Within 24 hours, a request with the same key, path and body as an earlier one gets the
earlier response again (status, body and its headers, plus ``Idempotent-Replayed: true``)
without running again; the same key with another path or body gives 422
``IDEMPOTENCY_KEY_REUSED``; while the first request runs, others with its key get 409
``IDEMPOTENCY_KEY_IN_USE``. Keys belong to one tenant and one principal (API key or user).

The layer runs after authentication, the rate limit and the body checks: a request refused
there never claims its key. Stored are the outcomes of requests that ran: 2xx and the
domain's 4xx. Not stored (the key is released and a retry runs again): 5xx, 401/403, 429,
and request validation errors (400, 413, 415, 422 ``VALIDATION_ERROR``), which by the
project's rules changed nothing. See docs/decisions.md, "Rate limits and idempotency".
"""

import hashlib
import json
import logging
import secrets
import time

from flask import Flask, Response, current_app, g, request
from peewee import (
    BigIntegerField,
    CharField,
    CompositeKey,
    DatabaseError,
    Expression,
    IntegerField,
)

from ..auth.middleware import AuthContext, check_view_scope
from ..crypto import EncryptedTextField, SecretUnreadable, readable, require_readable_keys
from ..db import BaseModel, JSONField
from ..errors import ApiError
from ..sql import Statement
from ..timeutil import now_ms
from .request import upload_form, upload_limit

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
TTL_MS = 24 * 3600 * 1000
# A claim older than this belongs to a request that died (gunicorn kills a worker after 60 s):
# a retry with the same body may take it over.
LOCK_MS = 90 * 1000
PURGE_INTERVAL_SECONDS = 60

# Responses to requests that were refused before doing anything: the client fixes the
# request and may retry it with the same key.
NOT_STORED_STATUSES = frozenset((401, 403, 429))
NOT_STORED_CODES = frozenset(
    (
        "VALIDATION_ERROR",
        "INVALID_JSON",
        "UNSUPPORTED_MEDIA_TYPE",
        "PAYLOAD_TOO_LARGE",
        "BAD_REQUEST",
        "INVALID_CURSOR",
        "METHOD_NOT_ALLOWED",
        "IDEMPOTENCY_KEY_IN_USE",
        "IDEMPOTENCY_KEY_REUSED",
        "INVALID_IDEMPOTENCY_KEY",
    )
)
# Headers that belong to one delivery, not to the stored result.
UNSTORED_HEADERS = frozenset(
    (
        "content-length",
        "date",
        "server",
        "connection",
        "transfer-encoding",
        "set-cookie",
        "x-request-id",
        "retry-after",
        REPLAYED_HEADER.lower(),
    )
)


# (tenant id, principal, key, lock token): a claim this request holds
IdempotencyClaim = tuple[str, str, str, str]


class IdempotencyRecord(BaseModel):
    """A claimed key and, once the request finished, its response."""

    tenant_id = CharField(max_length=36)
    principal = CharField(max_length=255)  # "key:<key id>" or "user:<sub>"
    idempotency_key = CharField(max_length=MAX_KEY_LENGTH)
    fingerprint = CharField(max_length=64)  # sha256 of method, path, query and JSON body
    state = CharField(max_length=12)  # in_progress | done
    lock_token = CharField(max_length=32, null=True)
    status_code = IntegerField(null=True)
    response_headers = JSONField(null=True)  # [[name, value], ...]
    # encrypted at rest: a response may carry a secret (a webhook's, an API key)
    response_body = EncryptedTextField(null=True)
    created_at = BigIntegerField()
    locked_at = BigIntegerField()
    expires_at = BigIntegerField(index=True)

    class Meta:
        primary_key = CompositeKey("tenant_id", "principal", "idempotency_key")


# Insert the claim, or take over a row whose 24 hours are over, or a stale claim of the
# same request; a live row with a result or a live claim is left alone (no row returned).
_CLAIM = Statement(
    "INSERT INTO {R} AS r ({R.tenant_id}, {R.principal}, {R.idempotency_key},"
    " {R.fingerprint}, {R.state}, {R.lock_token}, {R.status_code}, {R.response_headers},"
    " {R.response_body}, {R.created_at}, {R.locked_at}, {R.expires_at})"
    " VALUES ({p:tenant_id}, {p:principal}, {p:key}, {p:fingerprint}, 'in_progress',"
    " {p:token}, NULL, NULL, NULL, {p:now}, {p:now}, {p:expires_at})"
    " ON CONFLICT ({R.tenant_id}, {R.principal}, {R.idempotency_key}) DO UPDATE SET"
    " {R.fingerprint} = excluded.{R.fingerprint}, {R.state} = 'in_progress',"
    " {R.lock_token} = excluded.{R.lock_token}, {R.status_code} = NULL,"
    " {R.response_headers} = NULL, {R.response_body} = NULL,"
    " {R.created_at} = excluded.{R.created_at}, {R.locked_at} = excluded.{R.locked_at},"
    " {R.expires_at} = excluded.{R.expires_at}"
    " WHERE r.{R.expires_at} <= {p:now}"
    " OR (r.{R.state} = 'in_progress' AND r.{R.locked_at} <= {p:stale}"
    " AND r.{R.fingerprint} = excluded.{R.fingerprint})"
    " RETURNING {R.lock_token}",
    R=IdempotencyRecord,
)
_PURGE = Statement(
    "DELETE FROM {R} WHERE ({R.tenant_id}, {R.principal}, {R.idempotency_key}) IN"
    " (SELECT {R.tenant_id}, {R.principal}, {R.idempotency_key} FROM {R}"
    " WHERE {R.expires_at} <= {p:now} LIMIT 1000)",
    R=IdempotencyRecord,
)


def _held(claim: IdempotencyClaim) -> Expression:
    """The claimed record, while ``claim``'s lock token still holds it."""
    tenant_id, principal, key, token = claim
    return (
        (IdempotencyRecord.tenant_id == tenant_id)
        & (IdempotencyRecord.principal == principal)
        & (IdempotencyRecord.idempotency_key == key)
        & (IdempotencyRecord.lock_token == token)
    )


class IdempotencyStore:
    """Claims, results and expiry of idempotency keys; ``clock`` (epoch ms) is replaceable."""

    def __init__(self, clock=now_ms):
        self.clock = clock
        self._next_purge = 0.0
        self._unreleased = []  # claims whose release met a database outage

    def release_later(self, claim: IdempotencyClaim) -> None:
        """Keep a claim that could not be released (the database was down) for the next
        request of this process to release."""
        self._unreleased.append(claim)

    def release_pending(self) -> None:
        """Release the claims kept by ``release_later``; those that fail again stay."""
        if not self._unreleased:
            return
        pending, self._unreleased = self._unreleased, []
        for index, claim in enumerate(pending):
            try:
                self.release(claim)
            except DatabaseError:
                self._unreleased.extend(pending[index:])
                return

    def claim(self, tenant_id: str, principal: str, key: str, fingerprint: str) -> str | None:
        """Claim the key for this request: its lock token, or None if the key is taken."""
        now = self.clock()
        token = secrets.token_hex(16)
        params = {
            "tenant_id": tenant_id,
            "principal": principal,
            "key": key,
            "fingerprint": fingerprint,
            "token": token,
            "now": now,
            "expires_at": now + TTL_MS,
            "stale": now - LOCK_MS,
        }
        rows = _CLAIM.execute(params).fetchall()
        if time.monotonic() >= self._next_purge:
            self._next_purge = time.monotonic() + PURGE_INTERVAL_SECONDS
            _PURGE.execute({"now": now})
        return token if rows and rows[0][0] == token else None

    def find(self, tenant_id: str, principal: str, key: str) -> IdempotencyRecord | None:
        """The live (unexpired) record of the key, or None."""
        return (
            IdempotencyRecord.select()
            .where(
                (IdempotencyRecord.tenant_id == tenant_id)
                & (IdempotencyRecord.principal == principal)
                & (IdempotencyRecord.idempotency_key == key)
                & (IdempotencyRecord.expires_at > self.clock())
            )
            .first()
        )

    def complete(
        self, claim: IdempotencyClaim, status: int, headers: list[list[str]], body: str
    ) -> None:
        """Store the response of the claimed request."""
        (
            IdempotencyRecord.update(
                state="done",
                lock_token=None,
                status_code=status,
                response_headers=headers,
                response_body=body,
            )
            .where(_held(claim))
            .execute()
        )

    def release(self, claim: IdempotencyClaim) -> None:
        """Forget the claim: the request stored nothing and may be retried with its key."""
        IdempotencyRecord.delete().where(_held(claim)).execute()

    def purge(self) -> int:
        """Delete the records whose 24 hours are over (at most 1,000 per call)."""
        return _PURGE.execute({"now": self.clock()}).rowcount


def principal_of(auth: AuthContext) -> str:
    if auth.kind == "api_key":
        return f"key:{auth.principal_id}"
    principal = f"user:{auth.principal_id}"
    if len(principal) > 255:
        principal = "user:" + hashlib.sha256(auth.principal_id.encode()).hexdigest()
    return principal


def _valid_key(raw):
    if not 1 <= len(raw) <= MAX_KEY_LENGTH:
        reason = f"{HEADER} must be 1 to {MAX_KEY_LENGTH} characters."
    elif not all(" " <= ch <= "~" for ch in raw):
        reason = f"{HEADER} must be printable ASCII."
    else:
        return raw
    raise ApiError("INVALID_IDEMPOTENCY_KEY", reason, details={"header": HEADER})


def _upload_identity(limit):
    """A file upload's body as its fields and its files' digests: the multipart boundary
    differs on every send, the fields and the files do not (read as werkzeug spooled them)."""
    form, files = upload_form(limit)
    fields = sorted(form.items(multi=True), key=lambda item: (str(item[0]), str(item[1])))
    parts = [["field", str(name), str(value)] for name, value in fields]
    for name, upload in sorted(files.items(multi=True), key=lambda item: str(item[0])):
        content = hashlib.sha256()
        while chunk := upload.stream.read(1024 * 1024):
            content.update(chunk)
        upload.stream.seek(0)
        parts.append(["file", str(name), upload.filename or "", content.hexdigest()])
    return json.dumps(parts, separators=(",", ":"))


def fingerprint() -> str:
    """The request's identity: method, path, query string and the body as canonical JSON
    (a file upload: its fields and its files' digests)."""
    limit = upload_limit()
    if limit is not None:
        body = _upload_identity(limit)
    else:
        raw = request.get_data(cache=True)
        # the body checks ran first, so a non-empty body is valid JSON
        body = json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":")) if raw else ""
    digest = hashlib.sha256()
    for part in (request.method, request.path, request.query_string.decode("latin-1"), body):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def shown_once(*fields: str) -> None:
    """Called by a view whose answer carries a secret in ``data``'s ``fields``: the
    stored response has them null, so a replay never shows the secret a second time."""
    g.idempotency_secret_fields = fields


def _without_secrets(body, fields):
    """The JSON ``body`` with ``data``'s secret ``fields`` set to null."""
    try:
        document = json.loads(body)
    except ValueError:
        return body
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, dict):
        return body
    for name in fields:
        if name in data:
            data[name] = None
    return json.dumps(document, separators=(",", ":"))


def _replay(record):
    headers = [tuple(pair) for pair in record.response_headers or []]
    body = readable(record.response_body) or ""  # SecretUnreadable: 503, nothing replayed
    response = Response(body, status=record.status_code, headers=headers)
    response.headers[REPLAYED_HEADER] = "true"
    return response


def begin_idempotent_request() -> Response | None:
    """Claim the request's key, or answer with the stored response, 409 or 422."""
    if request.method != "POST":
        return None
    raw = request.headers.get(HEADER)
    auth = g.get("auth")
    if raw is None or auth is None:
        return None
    key = _valid_key(raw)
    # its response is stored encrypted: with keys that read no stored secret, refused
    # before anything runs (503 SECRET_KEY_MISMATCH), never a response it cannot store
    require_readable_keys()
    store = current_app.extensions["commerce"]["idempotency"]
    store.release_pending()
    principal = principal_of(auth)
    digest = fingerprint()
    for _ in range(3):
        token = store.claim(auth.tenant_id, principal, key, digest)
        if token is not None:
            g.idempotency_claim = (auth.tenant_id, principal, key, token)
            return None
        record = store.find(auth.tenant_id, principal, key)
        if record is None:  # released or expired in between: claim again
            continue
        if record.fingerprint != digest:
            raise ApiError(
                "IDEMPOTENCY_KEY_REUSED",
                "This idempotency key was used with another request (path or body).",
                details={"idempotency_key": key},
            )
        if record.state != "done":
            break
        # the answer is given without running the view: its scope check runs here (a
        # caller that lost the scope since gets 403, as a new request would)
        check_view_scope()
        return _replay(record)
    raise ApiError(
        "IDEMPOTENCY_KEY_IN_USE",
        "A request with this idempotency key is still in progress; retry later.",
        details={"idempotency_key": key},
        headers={"Retry-After": "1"},
    )


def _should_store(response):
    status = response.status_code
    if status >= 500 or status in NOT_STORED_STATUSES:
        return False
    if status >= 400:
        try:
            code = json.loads(response.get_data())["error"]["code"]
        except (ValueError, KeyError, TypeError):
            return True
        return code not in NOT_STORED_CODES
    return True


def _stored_headers(response):
    return [
        [name, value]
        for name, value in response.headers.items()
        if name.lower() not in UNSTORED_HEADERS and not name.lower().startswith("x-ratelimit-")
    ]


def finish_idempotent_request(response: Response) -> Response:
    """Store the claimed request's response, or release the claim."""
    claim = g.pop("idempotency_claim", None)
    if claim is None:
        return response
    store = current_app.extensions["commerce"]["idempotency"]
    if not _should_store(response):
        try:
            store.release(claim)
        except DatabaseError:
            # a database outage failed the request and its release: the next request of
            # this process releases the claim (a retry must not wait for LOCK_MS)
            log.warning("could not release idempotency key (request %s)", g.request_id)
            store.release_later(claim)
        return response
    try:
        body = response.get_data(as_text=True)  # encrypted by its field
        secrets_shown = g.pop("idempotency_secret_fields", None)
        if secrets_shown:
            body = _without_secrets(body, secrets_shown)
        store.complete(claim, response.status_code, _stored_headers(response), body)
    except SecretUnreadable:
        # the keys stopped reading the stored secrets since the request began: nothing
        # is written with them; the key may be used again after LOCK_MS
        log.error("idempotent response not stored: no readable key (request %s)", g.request_id)
    except DatabaseError:
        # The work is done and its response goes out; the claim stays until LOCK_MS passes.
        log.exception("could not store the idempotent response (request %s)", g.request_id)
    return response


def init_app(app: Flask) -> None:
    """The app's store; the request pipeline calls ``begin_idempotent_request`` after its
    checks and ``finish_idempotent_request`` on every response."""
    app.extensions["commerce"]["idempotency"] = IdempotencyStore()
