"""Helpers of the webhook tests: a real local receiver, verification, running delivery."""

import base64
import collections
import contextlib
import hashlib
import hmac
import json
import select
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import standardwebhooks

from commerce_api.db import db, write_transaction
from commerce_api.events import emit
from commerce_api.webhooks.service import run_loop

HANG = "hang"  # an answer of ``respond``: answer nothing until the sender hangs up


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real receivers

    def do_POST(self):  # noqa: N802
        receiver = self.server.receiver
        receiver._begin(self.path)
        answered = False
        try:
            answered = self._post(receiver)
        finally:
            if not answered:
                receiver._end(self.path)

    def _post(self, receiver):
        """Read, record and answer the request; True once it no longer counts as in flight."""
        received_at = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        record = {
            "path": self.path,
            "headers": {k: v for k, v in self.headers.items()},
            "body": body,
            "received_at": received_at,
        }
        answer = receiver._answer(record)
        if answer == HANG:
            self._hang(receiver)
            return False
        status, headers = answer[:2]
        receiver._end(self.path)  # answered: the sender may send the next one
        payload = answer[2] if len(answer) > 2 else b"ok"  # (status, headers, body)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        try:
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass  # the sender gave up (a time-out test)
        return True

    def _hang(self, receiver):
        """Answer nothing until the sender closes the connection (or the test ends)."""
        self.close_connection = True
        deadline = time.monotonic() + 120
        while not receiver.closing.is_set() and time.monotonic() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.02)
            if readable:
                try:
                    if not self.connection.recv(1024):
                        return  # the sender hung up
                except OSError:
                    return

    def log_message(self, *args):
        pass


class Receiver:
    """An HTTP server in the test process that records every delivery it gets.

    ``script`` maps a key (``delivery``: X-Service-Delivery, or ``event``: webhook-id) to
    a list of statuses answered in turn (then 200); ``respond(record)`` may decide instead
    (``(status, headers)``, ``(status, headers, body bytes)`` (the body is ``ok`` unless
    given), or ``HANG``). ``max_in_flight[path]``: the most requests to
    one path it ever had open at once.
    """

    def __init__(self, respond=None, host="127.0.0.1", port=0):
        self.requests = []
        self.script = {}
        self.respond = respond
        self.in_flight = collections.Counter()
        self.max_in_flight = collections.Counter()
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, port), _Handler)
        self.server.daemon_threads = True
        self.server.receiver = self
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def _begin(self, path):
        with self._lock:
            self.in_flight[path] += 1
            self.max_in_flight[path] = max(self.max_in_flight[path], self.in_flight[path])

    def _end(self, path):
        with self._lock:
            self.in_flight[path] -= 1

    def _answer(self, record):
        with self._lock:
            self.requests.append(record)
            event_id = record["headers"].get("webhook-id")
            for key in (event_id, record["headers"].get("X-Service-Delivery")):
                if key in self.script and self.script[key]:
                    answer = self.script[key].pop(0)
                    return answer if isinstance(answer, tuple) else (answer, {})
        if self.respond is not None:
            return self.respond(record)
        return 200, {}

    def bodies(self):
        with self._lock:
            return [json.loads(r["body"]) for r in self.requests]

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


@pytest.fixture
def hooks_app(app, monkeypatch):
    """The app with loopback receivers allowed and fast retries."""
    monkeypatch.setitem(app.config, "WEBHOOK_ALLOW_PRIVATE_TARGETS", True)
    monkeypatch.setitem(app.config, "WEBHOOK_RETRY_SCHEDULE", "0,0,0")
    monkeypatch.setitem(app.config, "WEBHOOK_TIMEOUT_SECONDS", 5.0)
    return app


def verify_stdlib(secret, body, headers):
    """Both schemes with the standard library only (as the README shows a receiver)."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    github = hmac.compare_digest(expected, headers["X-Service-Signature"])
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    digest = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    standard = any(
        hmac.compare_digest(f"v1,{digest}", candidate)
        for candidate in headers["webhook-signature"].split(" ")
    )
    fresh = abs(time.time() - int(headers["webhook-timestamp"])) < 300
    return github and standard and fresh


def verify_library(secret, body, headers):
    """The standardwebhooks package's own verification; returns the parsed body."""
    return standardwebhooks.Webhook(secret).verify(body, headers)


def create_webhook(client, headers, url, events=("*",), **extra):
    response = client.post(
        "/api/webhooks", json={"url": url, "events": list(events), **extra}, headers=headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def emit_events(tenant_id, items):
    """Write ``[(type, resource_id, data)]`` to the outbox, one transaction each, in order."""
    ids = []
    for event_type, resource_id, data in items:
        with write_transaction():
            ids.append(emit(tenant_id, event_type, event_type.split(".")[0], resource_id, data))
    return ids


def deliver(app):
    """Fan out and send everything due now, until nothing is (``worker --once``'s pass)."""
    stop = threading.Event()
    stop.set()
    with app.app_context():
        return run_loop(app.config, stop)


@contextlib.contextmanager
def delivering(app):
    """Run the delivery loop in a thread, as a worker does, while the block runs."""
    stop = threading.Event()
    errors = []

    def main():
        with app.app_context():
            try:
                run_loop(app.config, stop)
            except Exception as exc:  # surfaced by the test
                errors.append(exc)
            finally:
                if not db.is_closed():
                    db.close()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(30)
        assert not thread.is_alive(), "the delivery loop did not stop"
        assert not errors, errors
