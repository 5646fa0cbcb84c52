"""The soak's fake peers (bench/soak.py): a marketplace adapter per tenant and webhook
receivers, all on 127.0.0.1."""

import collections
import concurrent.futures
import json
import threading
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

MARKETPLACE = "shop"


class QuietServer(ThreadingHTTPServer):
    """A threaded server that does not print a client's reset (the service giving up at its
    deadline is expected here)."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def now_iso():
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# The fake marketplace ----------------------------------------------------------------------


class Marketplace:
    """One tenant's marketplace: listings it holds, orders it brings, faults it injects.

    Answers in 30-300 ms; 5 % 503, 3 % 429 (Retry-After: 1), 2 % too slowly (the change
    is made, the answer comes after ``deadline`` + 1 s). An ``Idempotency-Key`` seen
    before gets the first answer again and changes nothing."""

    def __init__(self, skus, rng, deadline):
        self.deadline = deadline
        self.skus = skus
        self.rng = rng
        self.lock = threading.Lock()
        self.listings = {}  # sku -> {"price", "quantity", "status"} as last accepted
        self.answers = {}  # Idempotency-Key -> the answer given (a retried push is recognised)
        self.orders = []
        self.history = collections.defaultdict(list)  # sku -> [(key, quantity, price)]
        self.faults = collections.Counter()
        self.closing = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status, payload, headers=None):
                body = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the service gave up (its deadline): expected

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                fault = outer.fault()
                if fault == "503":
                    return self._send(503, {"error": {"code": "DOWN", "message": "Down."}})
                if fault == "429":
                    return self._send(429, {}, {"Retry-After": "1"})
                status, payload = outer.answer(
                    self.command, urlparse(self.path), body, self.headers
                )
                if fault == "slow":  # the change is made; the answer comes too late
                    outer.closing.wait(outer.deadline + 1)
                else:
                    outer.closing.wait(outer.rng.uniform(0.03, 0.3))
                self._send(status, payload)

            do_GET = do_PUT = do_POST = _handle

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def fault(self):
        roll = self.rng.random()
        kind = "503" if roll < 0.05 else "429" if roll < 0.08 else "slow" if roll < 0.10 else None
        if kind:
            with self.lock:
                self.faults[kind] += 1
        return kind

    def answer(self, method, url, body, headers):
        key = headers.get("Idempotency-Key")
        with self.lock:
            if key and key in self.answers:
                return 200, self.answers[key]
            result = self._apply(method, url, body, key)
            if key:
                self.answers[key] = result[1]
            return result

    def _apply(self, method, url, body, key=None):
        path = url.path
        if method == "PUT" and path.startswith("/products/"):
            sku = unquote(path.rsplit("/", 1)[-1])
            held = self.listings.setdefault(sku, {"price": 20.0, "quantity": 0})
            if body.get("price") is not None:
                held["price"] = body["price"]
            if "quantity" in body and body["quantity"] is not None:
                held["quantity"] = body["quantity"]
            held["status"] = body.get("status") or "active"
            self.history[sku].append((key or "-", body.get("quantity"), body.get("price")))
            return 200, {"external_id": f"EXT-{sku}", "currency": "USD", **held}
        if method == "POST" and path.endswith("/shipment"):
            return 200, {"confirmation_id": uuid.uuid4().hex[:12]}
        if method == "POST" and path.endswith("/cancellation"):
            return 200, {"status": "approved"}
        if path == "/orders":
            start = int(parse_qs(url.query).get("cursor", ["0"])[0] or 0)
            page = self.orders[start : start + 50]
            end = start + len(page)
            return 200, {
                "orders": page,
                "next_cursor": str(end),
                "has_more": end < len(self.orders),
            }
        if path == "/inventory":
            return 200, {"items": []}
        if path == "/competitor-prices":
            skus = parse_qs(url.query).get("sku", [])
            return 200, {"prices": [self._offer(sku) for sku in skus]}
        if path == "/reviews":
            return 200, {"reviews": []}
        return 404, {"error": {"code": "NOT_FOUND", "message": "No route."}}

    def _offer(self, sku):
        price = round(self.rng.uniform(15, 25), 2)
        return {
            "sku": sku,
            "competitor": "rival",
            "price": price,
            "shipping": 0,
            "landed_price": price,
            "currency": "USD",
            "is_buy_box_winner": True,
            "condition": "new",
            "observed_at": now_iso(),
        }

    def new_order(self):
        with self.lock:
            number = len(self.orders) + 1
            lines = []
            for n, sku in enumerate(self.rng.sample(self.skus, self.rng.randint(1, 2))):
                quantity = self.rng.randint(1, 2)
                lines.append(
                    {
                        "external_line_item_id": f"O{number}-L{n}",
                        "sku": sku,
                        "title": "Soak item",
                        "quantity": quantity,
                        "unit_price": 10.0,
                        "line_total": 10.0 * quantity,
                    }
                )
            self.orders.append(
                {
                    "external_order_id": f"O{number}",
                    "marketplace": MARKETPLACE,
                    "status": "pending",
                    "fulfillment_method": "FBM",
                    "total_amount": sum(line["line_total"] for line in lines),
                    "currency": "USD",
                    "created_at": now_iso(),
                    "line_items": lines,
                    "shipping_address": {
                        "name": "Ada Lovelace",
                        "line1": "12 St James's Square",
                        "line2": None,
                        "city": "London",
                        "region": "LND",
                        "postal_code": "SW1Y 4JH",
                        "country": "GB",
                    },
                }
            )

    def close(self):
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


class Receiver:
    """A webhook receiver; ``failing`` answers 500 to 60 % of the deliveries."""

    def __init__(self, failing, rng):
        self.received = collections.Counter()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = 500 if failing and rng.random() < 0.6 else 200
                outer.received[status] += 1
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class AmazonMarket:
    """An Amazon tenant's marketplace: the SP-API contract fake (tests/support/amazon_fake.py)
    answering in 30 ms, with a 503 and an unplanned 429 now and then, seen as the soak sees
    the other fakes (``listings``, ``history``, ``new_order``, ``faults``)."""

    def __init__(self, skus, rng):
        from tests.support.amazon_fake import AmazonFake

        self.fake = AmazonFake(delay=0.03, feed_seconds=1.0).start()
        for sku in skus:
            self.fake.add_listing(sku)
        self.skus = skus
        self.rng = rng
        self.orders = 0
        self.url = self.fake.url

    @property
    def listings(self):
        return self.fake.listings

    @property
    def history(self):
        return collections.defaultdict(list, {sku: self.fake.pushes_of(sku) for sku in self.skus})

    def new_order(self):
        self.orders += 1
        sku = self.rng.choice(self.skus)
        quantity = self.rng.randint(1, 2)
        self.fake.add_order(f"114-{self.orders:07d}-0000001", [(sku, quantity, "9.99")])
        if self.orders % 7 == 0:
            self.fake.fail_next(1, 503)
        if self.orders % 11 == 0:
            self.fake.throttle_next(1)

    @property
    def faults(self):
        return collections.Counter(
            {
                "refused_by_contract": self.fake.refused_count(),
                "throttled_by_plan": self.fake.throttled,
                "fake_answer_problems": len(self.fake.answer_problems),
            }
        )

    def close(self):
        self.fake.close()


class ShopifyMarket:
    """A Shopify tenant's shop: the Admin GraphQL contract fake (tests/support/shopify_fake.py,
    a 100-point bucket restoring 50 a second, answering in 30 ms), one location mapped to
    the tenant's own warehouse. Each new order is created in the fake, which signs its
    ``orders/create`` webhook; it is POSTed to the service's notification route from a
    thread of its own (``attach`` gives the address), so a database cut delays no load.
    Seen as the soak sees the other fakes (``listings``, ``history``, ``new_order``,
    ``faults``); ``orders`` are the gids created, ``notified`` the answers' statuses."""

    def __init__(self, skus, rng):
        from tests.support.shopify_fake import ShopifyFake

        self.fake = ShopifyFake(maximum=100, restore=50, delay=0.03).start()
        for sku in skus:
            # a price the service never sets: an unpushed price shows
            self.fake.add_variant(sku, price="1.00", quantity=0)
        self.skus = skus
        self.rng = rng
        self.orders = []
        self.notified = collections.Counter()
        self.url = self.fake.url
        self.notify_url = None
        self.connection_id = None  # set once connected
        self.sending = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="notify")

    def attach(self, base):
        self.notify_url = f"{base}/api/marketplaces/{self.connection_id}/notifications"

    @property
    def listings(self):
        """sku -> {"quantity", "price", "status"} for the SKUs the service pushed a
        quantity of (at the mapped location)."""
        pushed = {item for item, *_ in self.fake.sets}
        held = {}
        for sku in self.skus:
            variant = self.fake.variant_of(sku)
            if variant["inventoryItem"]["id"] in pushed:
                held[sku] = {
                    "quantity": self.fake.quantity(sku),
                    "price": variant["price"],
                    "status": variant["product"]["status"],
                }
        return held

    @property
    def history(self):
        """sku -> [(quantity, compare quantity)] as set, in order."""
        skus = {self.fake.variant_of(sku)["inventoryItem"]["id"]: sku for sku in self.skus}
        history = collections.defaultdict(list)
        for item, _location, quantity, compare, _at in list(self.fake.sets):
            history[skus.get(item, item)].append((quantity, compare))
        return history

    def new_order(self):
        lines = [
            (sku, self.rng.randint(1, 2), "10.00")
            for sku in self.rng.sample(self.skus, self.rng.randint(1, 2))
        ]
        gid = self.fake.add_order(lines)
        self.orders.append(gid)
        if self.notify_url:
            self.sending.submit(self._notify, gid)

    def _notify(self, gid):
        try:
            status = self.fake.notify(self.notify_url, gid).status_code
        except OSError:  # (requests' errors are OSErrors) the database cut, a time-out
            status = "error"
        self.notified[status] += 1

    @property
    def faults(self):
        return collections.Counter(
            {
                "shopify refused_by_schema": self.fake.refused_count(),
                "shopify throttled": self.fake.throttled,
                "shopify fake_answer_problems": len(self.fake.answer_problems),
            }
        )

    def throttled(self):
        """The queries answered THROTTLED: (root fields, cost, points left, seconds after
        the query before)."""
        journal = list(self.fake.journal)
        return [
            (fields, cost, left, round(at - journal[n - 1][4], 3) if n else None)
            for n, (fields, cost, taken, left, at) in enumerate(journal)
            if not taken
        ][:5]

    def close(self):
        self.sending.shutdown(wait=True, cancel_futures=True)
        self.fake.close()
