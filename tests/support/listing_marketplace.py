"""A marketplace adapter on 127.0.0.1 that keeps the listings pushed to it (the ``http``
connector's wire contract, docs/connector-http.md), for listing-sync tests and benchmarks.

``pushes`` holds every ``PUT /products/:sku`` in arrival order: ``{sku, body,
idempotency_key, at}`` (``at``: ``time.time()`` when it arrived). ``reject`` names SKUs it
refuses with 422 (or, in a ``POST /products/batch``, with an error
result), ``busy`` SKUs it answers 429 with ``Retry-After: 7``; ``delay`` is how
long it takes to answer (seconds). Order pulls get an
empty page, stock requests an empty list, shipments and cancellations are accepted.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote, urlparse

from .servers import LocalHTTPServer


class ListingMarketplace(LocalHTTPServer):
    def __init__(self, delay=0.0):
        self.delay = delay
        self.reject = set()
        self.busy = set()
        self.pushes = []
        self.batches = []  # the size of each POST /products/batch
        self.other = []  # (method, path) of every other request
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real marketplace would

            def log_message(self, *args):
                pass

            def _answer(self, status, payload, headers=()):
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = urlparse(self.path).path
                if outer.delay:
                    time.sleep(outer.delay)
                if self.command == "PUT" and path.startswith("/products/"):
                    sku = unquote(path[len("/products/") :])
                    body = json.loads(raw)
                    with outer.lock:
                        outer.pushes.append(
                            {
                                "sku": sku,
                                "body": body,
                                "idempotency_key": self.headers.get("Idempotency-Key"),
                                "at": time.time(),
                            }
                        )
                    if sku in outer.busy:
                        return self._answer(429, {}, headers=[("Retry-After", "7")])
                    if sku in outer.reject:
                        return self._answer(
                            422, {"error": {"code": "BAD_LISTING", "message": "Refused."}}
                        )
                    return self._answer(
                        200,
                        {
                            "external_id": f"EXT-{sku}",
                            "status": body.get("status"),
                            "price": body.get("price"),
                            "quantity": body.get("quantity"),
                        },
                    )
                if self.command == "POST" and path == "/products/batch":
                    listings = json.loads(raw)["listings"]
                    results = []
                    with outer.lock:
                        outer.batches.append(len(listings))
                        for body in listings:
                            sku = body["sku"]
                            outer.pushes.append(
                                {
                                    "sku": sku,
                                    "body": body,
                                    "idempotency_key": body.get("idempotency_key"),
                                    "at": time.time(),
                                }
                            )
                            if sku in outer.reject:
                                error = {"code": "BAD_LISTING", "message": "Refused."}
                                results.append({"sku": sku, "error": error})
                            else:
                                results.append(
                                    {"sku": sku, "external_id": f"EXT-{sku}",
                                     "quantity": body.get("quantity")}
                                )  # fmt: skip
                    return self._answer(200, {"results": results})
                with outer.lock:
                    outer.other.append((self.command, path))
                if path == "/orders":
                    return self._answer(200, {"orders": [], "next_cursor": None})
                if path == "/inventory":
                    return self._answer(200, {"items": []})
                if path.endswith("/shipment"):
                    return self._answer(200, {"confirmation_id": "CONF-1"})
                if path.endswith("/cancellation"):
                    return self._answer(200, {"status": "approved"})
                return self._answer(404, {"error": {"code": "NOT_FOUND", "message": "No."}})

            do_GET = do_POST = do_PUT = _handle

        self.serve(Handler)

    def pushes_of(self, sku):
        with self.lock:
            return [push for push in self.pushes if push["sku"] == sku]

    def last_quantity(self, sku):
        pushes = self.pushes_of(sku)
        return pushes[-1]["body"].get("quantity") if pushes else None
