"""A contract fake of Amazon's Selling Partner API and Login with Amazon, on 127.0.0.1.

Every request is checked against the vendored published models (``tests/contracts/
amazon-sp-api``, Apache-2.0, unedited): the path must be one of a model's operations, each
declared path, query and header parameter must fit its declaration (required, type, enum,
array ``csv`` items, min/max), no undeclared query parameter may be sent, a body must be
JSON that validates against the operation's body schema (Swagger 2.0 models, checked with
``jsonschema`` Draft 4 against the model's definitions) and an uploaded
``JSON_LISTINGS_FEED`` document against the listings feed schema (v2). A request that
breaks any of this is refused (400 with Amazon's ``{errors: [...]}``) and COUNTED in
``refused``: tests assert that count is 0. Every SP-API call needs a live
``x-amz-access-token`` issued by the fake's token endpoint (``POST /auth/o2/token``).

Every answer the fake gives is checked against the operation's response schema; a
mismatch is a bug of the fake and is listed in ``answer_problems``.

Each operation's usage plan (rate and burst, parsed from the model's description, as a
token bucket per operation) is enforced: past it, 429 (counted in ``throttled``). Answers
carry ``x-amzn-RateLimit-Limit`` (the plan's rate, or ``rate_limit_header[operation]``).

Knobs: ``fail_next(n, status)`` (5xx), ``throttle_next(n)`` (429 beyond the plans),
``delay`` (seconds before each answer), ``invalid_skus`` ({sku: (code, message)}: the feed
report marks those messages invalid, a patch of that SKU is ``INVALID``), ``extra_report_sku``
(the report names a SKU that was never sent), ``expire_tokens()`` (every access token
issued so far is expired), ``token_fails`` (the token endpoint refuses the refresh token),
``usage_plans`` (False: no 429 from the plans), ``feed_seconds`` (how long a feed stays
in the queue), ``hold_feeds()`` (feeds created from then on stay ``IN_QUEUE``, whoever
asks) and ``process_feeds()`` (the held feeds are processed now, in the order given:
their messages land over whatever the listings hold then, as Amazon's asynchronous
processing may land an old feed after a newer patch).
"""

import copy
import itertools
import json
import re
import secrets
import threading
import time
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import jsonschema

from .servers import LocalHTTPServer

CONTRACTS = Path(__file__).resolve().parent.parent / "contracts" / "amazon-sp-api"
MODELS = (
    "listingsItems_2021-08-01.json",
    "feeds_2021-06-30.json",
    "ordersV0.json",
    "fbaInventory.json",
    "productPricingV0.json",
)
CLIENT_ID = "amzn1.application-oa2-client.fake"
CLIENT_SECRET = "fake-client-secret"
REFRESH_TOKEN = "Atzr|fake-refresh-token"
SELLER_ID = "A2FAKESELLER01"
MARKETPLACE_ID = "ATVPDKIKX0DER"
DATE_PARAMS = ("LastUpdatedAfter", "CreatedAfter", "startDateTime")
_FEED_IDS = itertools.count(50_000_000_000)
PLAN = re.compile(r"\|\s*([\d.]+)\s*\|\s*(\d+)\s*\|")


def iso(ms):
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _is_datetime(text):
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


class Operation:
    def __init__(self, model, method, template, spec, common):
        self.model = model
        self.method = method.upper()
        self.template = template
        self.id = spec["operationId"]
        self.spec = spec
        names = re.sub(r"\{([^}]+)\}", r"(?P<\1>[^/]+)", template)
        self.pattern = re.compile("^" + names + "$")
        params = []
        for param in common + spec.get("parameters", []):
            if "$ref" in param:
                param = model["parameters"][param["$ref"].split("/")[-1]]
            params.append(param)
        self.params = params
        found = PLAN.search(spec.get("description", ""))
        self.rate, self.burst = (float(found.group(1)), int(found.group(2))) if found else (0, 0)

    def schema(self, schema):
        return {**schema, "definitions": self.model["definitions"]}


class Bucket:
    """A usage plan's token bucket, charged when a call arrives; ``at``/``now`` on a clock
    of the caller's (tests/marketplaces/test_amazon_budget.py), else the monotonic one."""

    def __init__(self, rate, burst, at=None):
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.at = time.monotonic() if at is None else at

    def take(self, now=None):
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


def _load_operations():
    operations = []
    for name in MODELS:
        model = json.loads((CONTRACTS / "models" / name).read_text())
        for template, item in model["paths"].items():
            if not isinstance(item, dict):
                continue
            common = item.get("parameters", [])
            for method, spec in item.items():
                if isinstance(spec, dict) and "operationId" in spec:
                    operations.append(Operation(model, method, template, spec, common))
    return operations


def _feed_schema():
    return json.loads((CONTRACTS / "schemas" / "listings-feed-schema-v2.json").read_text())


def _report_schema():
    path = CONTRACTS / "schemas" / "listings-feed-processing-report-schema-v2.json"
    return json.loads(path.read_text())


class Refused(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class AmazonFake(LocalHTTPServer):
    """The fake SP-API and token endpoint. ``url`` is both the SP-API endpoint and the
    token endpoint's host (``token_url``)."""

    def __init__(self, delay=0.0, usage_plans=True, feed_seconds=0.2):
        self.operations = _load_operations()
        self.feed_validator = jsonschema.Draft7Validator(_feed_schema())
        self.report_validator = jsonschema.Draft7Validator(_report_schema())
        self.delay = delay
        self.usage_plans = usage_plans
        self.feed_seconds = feed_seconds
        self.lock = threading.RLock()
        self.refused = []  # (operation or path, message)
        self.answer_problems = []
        self.throttled = 0  # 429 answers from the usage plans
        self.calls = {}  # operation id -> count
        self.requests = []  # (operation id, path, query, body, monotonic time)
        self.buckets = {}
        self.rate_limit_header = {}
        self.failures = []  # statuses to answer next
        self.throttles = 0
        self.invalid_skus = {}
        self.extra_report_sku = None
        self.token_fails = False
        self.token_requests = 0
        self.tokens = {}  # access token -> expiry (time.time())
        self.token_lifetime = 3600
        # the seller's catalogue: sku -> {asin, quantity, price, currency, status}
        self.listings = {}
        self.patches = []  # (sku, patches, time.time())
        # every listing change that reached the fake, as the http fake keeps them (benches):
        # {sku, body: {quantity, price}, at}: a patch when it arrived, a feed's messages
        # when the document was uploaded
        self.pushes = []
        self.documents = {}  # id -> {content_type, content}
        self.feeds = {}  # id -> {...}
        self.orders = {}  # AmazonOrderId -> {order, items, address}
        self.shipments = []  # (order id, body)
        self.fba = {}  # sku -> fulfillable quantity
        self.offers = {}  # sku -> [OfferDetail]
        self._fed_order = 0
        self.holding = False  # hold_feeds(): new feeds stay IN_QUEUE until process_feeds()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, payload, headers = outer.handle(
                    self.command, self.path, dict(self.headers.items()), raw
                )
                body = (
                    b""
                    if payload is None
                    else (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
                )
                self.send_response(status)
                if body:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self.serve(Handler)

    # setup and knobs --------------------------------------------------------------------

    @property
    def token_url(self):
        return self.url + "/auth/o2/token"

    def credentials(self):
        return {
            "lwa_client_id": CLIENT_ID,
            "lwa_client_secret": CLIENT_SECRET,
            "refresh_token": REFRESH_TOKEN,
        }

    def settings(self, region="na"):
        return {
            "region": region,
            "marketplace_id": MARKETPLACE_ID,
            "seller_id": SELLER_ID,
            "endpoint": self.url,
            "token_endpoint": self.token_url,
        }

    def add_listing(self, sku, asin=None, quantity=0, price="19.99", currency="USD"):
        with self.lock:
            self.listings[sku] = {
                "asin": asin or "B0" + format(abs(hash(sku)) % 10**8, "08d"),
                "quantity": quantity,
                "price": price,
                "currency": currency,
            }

    def hold_feeds(self, hold=True):
        """Feeds created from now on stay ``IN_QUEUE`` until ``process_feeds``."""
        with self.lock:
            self.holding = hold

    def held_feeds(self):
        with self.lock:
            return [i for i, feed in self.feeds.items() if feed.get("held")]

    def process_feeds(self, feed_ids=None):
        """Process held feeds now (``feed_ids``: these, in this order; default all, oldest
        first): their messages are applied to the listings as they are now."""
        with self.lock:
            for feed_id in self.held_feeds() if feed_ids is None else feed_ids:
                feed = self.feeds[feed_id]
                feed["held"] = False
                if feed["report"] is None:
                    feed["report"] = self._process(feed)

    def fail_next(self, count=1, status=503):
        with self.lock:
            self.failures.extend([status] * count)

    def throttle_next(self, count=1):
        with self.lock:
            self.throttles += count

    def expire_tokens(self):
        with self.lock:
            for token in self.tokens:
                self.tokens[token] = 0

    def _received(self, sku, patches):
        body = {}
        for patch in patches:
            name = patch["path"].split("/")[-1]
            for value in patch.get("value") or []:
                if name == "fulfillment_availability" and "quantity" in value:
                    body["quantity"] = value["quantity"]
                if name == "purchasable_offer":
                    for price in value.get("our_price") or []:
                        for schedule in price.get("schedule") or []:
                            body["price"] = schedule.get("value_with_tax")
        self.pushes.append({"sku": sku, "body": body, "at": time.time()})

    def pushes_of(self, sku):
        with self.lock:
            return [push for push in self.pushes if push["sku"] == sku]

    def last_quantity(self, sku):
        pushes = [p for p in self.pushes_of(sku) if "quantity" in p["body"]]
        return pushes[-1]["body"]["quantity"] if pushes else None

    def refused_count(self):
        with self.lock:
            return len(self.refused)

    def count(self, operation):
        with self.lock:
            return self.calls.get(operation, 0)

    def add_order(
        self,
        order_id,
        items,
        *,
        status="Unshipped",
        channel="MFN",
        currency="USD",
        purchased_ms=None,
        updated_ms=None,
        address=None,
    ):
        """An order as Amazon holds it; ``items``: [(sku, quantity, unit price str)]."""
        now = int(time.time() * 1000)
        purchased_ms = purchased_ms or now
        with self.lock:
            self._fed_order += 1
            updated_ms = updated_ms or max(now, purchased_ms) + self._fed_order
            total = sum(Decimal(price) * quantity for _, quantity, price in items)
            order = {
                "AmazonOrderId": order_id,
                "PurchaseDate": iso(purchased_ms),
                "LastUpdateDate": iso(updated_ms),
                "OrderStatus": status,
                "FulfillmentChannel": channel,
                "MarketplaceId": MARKETPLACE_ID,
                "OrderTotal": {"CurrencyCode": currency, "Amount": str(total)},
                "NumberOfItemsShipped": 0,
                "NumberOfItemsUnshipped": sum(q for _, q, _ in items),
            }
            lines = [
                {
                    "ASIN": self.listings.get(sku, {}).get("asin", "B000000000"),
                    "SellerSKU": sku,
                    "OrderItemId": f"{order_id}-{n}",
                    "Title": f"Item {sku}",
                    "QuantityOrdered": quantity,
                    "ItemPrice": {
                        "CurrencyCode": currency,
                        "Amount": str(Decimal(price) * quantity),
                    },
                }
                for n, (sku, quantity, price) in enumerate(items, 1)
            ]
            self.orders[order_id] = {
                "order": order,
                "items": lines,
                "updated_ms": updated_ms,
                "address": address,
            }

    # the server -------------------------------------------------------------------------

    def handle(self, method, target, headers, raw):
        if self.delay:
            time.sleep(self.delay)
        parsed = urlparse(target)
        path = parsed.path
        query = parse_qs(parsed.query, keep_blank_values=True)
        headers = {name.lower(): value for name, value in headers.items()}
        try:
            if path == "/auth/o2/token":
                return self._token(method, headers, raw)
            if path.startswith("/documents/"):
                return self._document(method, path, headers, raw)
            operation, path_params = self._route(method, path)
            self._check_token(headers)
            with self.lock:
                self.calls[operation.id] = self.calls.get(operation.id, 0) + 1
                if self.failures:
                    status = self.failures.pop(0)
                    return status, _errors("InternalFailure", "Injected fault."), {}
                if self.throttles:
                    self.throttles -= 1
                    return 429, _errors("QuotaExceeded", "Injected throttle."), {}
                if self.usage_plans and operation.rate:
                    bucket = self.buckets.setdefault(
                        operation.id, Bucket(operation.rate, operation.burst)
                    )
                    if not bucket.take():
                        self.throttled += 1
                        return (
                            429,
                            _errors("QuotaExceeded", "You exceeded your quota."),
                            {"x-amzn-RateLimit-Limit": str(operation.rate)},
                        )
            body = self._check_request(operation, path_params, query, headers, raw)
            with self.lock:
                self.requests.append((operation.id, path, query, body, time.monotonic()))
            status, payload = getattr(self, "_op_" + operation.id)(path_params, query, body)
            self._check_answer(operation, status, payload)
            rate = self.rate_limit_header.get(operation.id, operation.rate)
            return status, payload, {"x-amzn-RateLimit-Limit": str(rate)}
        except Refused as exc:
            if exc.status == 400 or exc.status == 404:
                with self.lock:
                    self.refused.append((path, exc.message))
            return exc.status, _errors(exc.code, exc.message), {}

    def _route(self, method, path):
        for operation in self.operations:
            if operation.method != method:
                continue
            found = operation.pattern.match(path)
            if found:
                return operation, {k: unquote(v) for k, v in found.groupdict().items()}
        raise Refused(404, "NotFound", f"No operation {method} {path} in the models.")

    def _check_token(self, headers):
        token = headers.get("x-amz-access-token")
        if not token:
            raise Refused(400, "Unauthorized", "x-amz-access-token is missing.")
        with self.lock:
            expiry = self.tokens.get(token)
        if expiry is None or expiry <= time.time():
            # Amazon's answer for an expired or unknown token (not a contract refusal)
            raise Refused(403, "Unauthorized", "The access token you provided has expired.")

    def _check_request(self, operation, path_params, query, headers, raw):
        declared_query = set()
        body_param = None
        for param in operation.params:
            where, name = param["in"], param["name"]
            if where == "body":
                body_param = param
                continue
            if where == "path":
                values = [path_params.get(name)] if name in path_params else []
            elif where == "query":
                declared_query.add(name)
                values = query.get(name, [])
            elif where == "header":
                values = [headers[name.lower()]] if name.lower() in headers else []
            else:
                continue
            if not values:
                if param.get("required"):
                    raise Refused(400, "InvalidInput", f"{name} is required.")
                continue
            if len(values) > 1:
                raise Refused(400, "InvalidInput", f"{name} is given more than once.")
            self._check_value(param, name, values[0])
        unknown = set(query) - declared_query
        if unknown:
            raise Refused(400, "InvalidInput", f"Undeclared query parameters: {sorted(unknown)}.")
        if body_param is None:
            if raw:
                raise Refused(400, "InvalidInput", "This operation takes no body.")
            return None
        if not headers.get("content-type", "").startswith("application/json"):
            raise Refused(400, "InvalidInput", "The body must be application/json.")
        try:
            body = json.loads(raw)
        except ValueError:
            raise Refused(400, "InvalidInput", "The body is not JSON.") from None
        validator = jsonschema.Draft4Validator(operation.schema(body_param["schema"]))
        error = jsonschema.exceptions.best_match(validator.iter_errors(body))
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path)
            raise Refused(400, "InvalidInput", f"body {where}: {error.message}"[:500])
        return body

    def _check_value(self, param, name, text):
        kind = param.get("type", "string")
        if kind == "array":
            items = text.split(",") if param.get("collectionFormat", "csv") == "csv" else [text]
            if "maxItems" in param and len(items) > param["maxItems"]:
                raise Refused(400, "InvalidInput", f"{name}: more than {param['maxItems']}.")
            if len(items) < param.get("minItems", 1) or any(item == "" for item in items):
                raise Refused(400, "InvalidInput", f"{name}: an empty item.")
            for item in items:
                self._check_value(param["items"], name, item)
            return
        if kind == "integer":
            if not re.fullmatch(r"-?\d+", text):
                raise Refused(400, "InvalidInput", f"{name} is not an integer.")
            number = int(text)
            if number < param.get("minimum", number) or number > param.get("maximum", number):
                raise Refused(400, "InvalidInput", f"{name} is out of range.")
        elif kind == "boolean":
            if text not in ("true", "false"):
                raise Refused(400, "InvalidInput", f"{name} is not a boolean.")
        elif (param.get("format") == "date-time" or name in DATE_PARAMS) and not _is_datetime(text):
            raise Refused(400, "InvalidInput", f"{name} is not an ISO 8601 time.")
        if "enum" in param and text not in param["enum"]:
            raise Refused(400, "InvalidInput", f"{name}: {text!r} is not one of the enum.")
        if "maxLength" in param and len(text) > param["maxLength"]:
            raise Refused(400, "InvalidInput", f"{name} is too long.")
        if text == "" and kind == "string":
            raise Refused(400, "InvalidInput", f"{name} is empty.")

    def _check_answer(self, operation, status, payload):
        response = operation.spec["responses"].get(str(status))
        if response is None:
            self.answer_problems.append(f"{operation.id}: no response {status} in the model")
            return
        schema = response.get("schema")
        if schema is None:
            if payload is not None:
                self.answer_problems.append(f"{operation.id}: {status} takes no body")
            return
        validator = jsonschema.Draft4Validator(operation.schema(schema))
        for error in validator.iter_errors(payload):
            self.answer_problems.append(f"{operation.id}: {error.message}"[:300])

    # Login with Amazon --------------------------------------------------------------------

    def _token(self, method, headers, raw):
        with self.lock:
            self.token_requests += 1
        if method != "POST":
            raise Refused(400, "invalid_request", "POST only.")
        if not headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            raise Refused(400, "invalid_request", "A form body is required.")
        form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        if set(form) != {"grant_type", "refresh_token", "client_id", "client_secret"}:
            raise Refused(400, "invalid_request", f"Unexpected form fields {sorted(form)}.")
        if form["grant_type"] != "refresh_token":
            raise Refused(400, "unsupported_grant_type", "grant_type must be refresh_token.")
        if self.token_fails or (
            form["client_id"],
            form["client_secret"],
            form["refresh_token"],
        ) != (CLIENT_ID, CLIENT_SECRET, REFRESH_TOKEN):
            return 400, {"error": "invalid_grant", "error_description": "Bad refresh token"}, {}
        token = "Atza|" + secrets.token_urlsafe(24)
        with self.lock:
            self.tokens[token] = time.time() + self.token_lifetime
        return (
            200,
            {
                "access_token": token,
                "refresh_token": REFRESH_TOKEN,
                "token_type": "bearer",
                "expires_in": self.token_lifetime,
            },
            {},
        )

    # feed documents (the presigned upload and download URLs) ------------------------------

    def _document(self, method, path, headers, raw):
        kind, _, document_id = path[len("/documents/") :].partition("/")
        with self.lock:
            document = self.documents.get(document_id)
        if document is None:
            raise Refused(404, "NotFound", "No such document.")
        if kind == "upload" and method == "PUT":
            if headers.get("content-type") != document["content_type"]:
                raise Refused(400, "InvalidInput", "Content-Type differs from createFeedDocument.")
            try:
                feed = json.loads(raw)
            except ValueError:
                raise Refused(400, "InvalidInput", "The feed document is not JSON.") from None
            error = jsonschema.exceptions.best_match(self.feed_validator.iter_errors(feed))
            if error is not None:
                where = "/".join(str(part) for part in error.absolute_path)
                raise Refused(400, "InvalidInput", f"feed {where}: {error.message}"[:500])
            with self.lock:
                document["content"] = feed
                for message in feed["messages"]:
                    if message["sku"] in self.listings:
                        self._received(message["sku"], message.get("patches") or [])
            return 200, None, {}
        if kind == "download" and method == "GET":
            return 200, document["content"], {}
        raise Refused(400, "InvalidInput", f"{method} {path} is not allowed.")

    # operations ---------------------------------------------------------------------------

    def _seller(self, params):
        if params.get("sellerId") != SELLER_ID:
            raise Refused(403, "Unauthorized", "Not this seller's listings.")

    def _op_patchListingsItem(self, params, query, body):
        self._seller(params)
        sku = params["sku"]
        submission = str(uuid.uuid4())
        with self.lock:
            self.patches.append((sku, body["patches"], time.time()))
            self._received(sku, body["patches"])
            if sku not in self.listings:
                issue = {
                    "code": "4000001",
                    "message": "The SKU is not listed.",
                    "severity": "ERROR",
                }
                return 200, {
                    "sku": sku,
                    "status": "INVALID",
                    "submissionId": submission,
                    "issues": [issue],
                }
            if sku in self.invalid_skus:
                code, message = self.invalid_skus[sku]
                issue = {"code": code, "message": message, "severity": "ERROR"}
                return 200, {
                    "sku": sku,
                    "status": "INVALID",
                    "submissionId": submission,
                    "issues": [issue],
                }
            self._apply(sku, {p["path"].split("/")[-1]: p.get("value") for p in body["patches"]})
        return 200, {"sku": sku, "status": "ACCEPTED", "submissionId": submission, "issues": []}

    def _apply(self, sku, attributes):
        listing = self.listings[sku]
        for item in attributes.get("fulfillment_availability") or []:
            if "quantity" in item:
                listing["quantity"] = item["quantity"]
        for offer in attributes.get("purchasable_offer") or []:
            listing["currency"] = offer.get("currency", listing["currency"])
            for price in offer.get("our_price") or []:
                for schedule in price.get("schedule") or []:
                    listing["price"] = str(schedule["value_with_tax"])

    def _op_getListingsItem(self, params, query, body):
        self._seller(params)
        sku = params["sku"]
        with self.lock:
            listing = self.listings.get(sku)
        if listing is None:
            return 404, _errors("NOT_FOUND", f"SKU {sku} not found.")
        item = {
            "sku": sku,
            "summaries": [
                {
                    "marketplaceId": MARKETPLACE_ID,
                    "asin": listing["asin"],
                    "productType": "PRODUCT",
                    "status": ["BUYABLE"],
                    "itemName": f"Item {sku}",
                    "createdDate": iso(0),
                    "lastUpdatedDate": iso(int(time.time() * 1000)),
                }
            ],
            "issues": [],
            "offers": [
                {
                    "marketplaceId": MARKETPLACE_ID,
                    "offerType": "B2C",
                    "price": {"currencyCode": listing["currency"], "amount": listing["price"]},
                }
            ],
            "fulfillmentAvailability": [
                {"fulfillmentChannelCode": "DEFAULT", "quantity": listing["quantity"] or 0}
            ],
        }
        return 200, item

    def _op_createFeedDocument(self, params, query, body):
        document_id = "amzn1.tortuga.4." + uuid.uuid4().hex
        with self.lock:
            self.documents[document_id] = {"content_type": body["contentType"], "content": None}
        return 201, {
            "feedDocumentId": document_id,
            "url": f"{self.url}/documents/upload/{document_id}",
        }

    def _op_createFeed(self, params, query, body):
        with self.lock:
            document = self.documents.get(body["inputFeedDocumentId"])
            if document is None or document["content"] is None:
                return 400, _errors("InvalidInput", "The feed document was not uploaded.")
            if body["feedType"] != "JSON_LISTINGS_FEED":
                return 400, _errors("InvalidInput", "Only JSON_LISTINGS_FEED here.")
            feed_id = str(next(_FEED_IDS))  # unique across fakes: reports are cached by id
            self.feeds[feed_id] = {
                "feedId": feed_id,
                "feedType": body["feedType"],
                "marketplaceIds": body["marketplaceIds"],
                "created": time.time(),
                "document": document["content"],
                "report": None,
                "held": self.holding,
            }
        return 202, {"feedId": feed_id}

    def _op_getFeed(self, params, query, body):
        with self.lock:
            feed = self.feeds.get(params["feedId"])
            if feed is None:
                return 404, _errors("NotFound", "No such feed.")
            age = time.time() - feed["created"]
            answer = {
                "feedId": feed["feedId"],
                "feedType": feed["feedType"],
                "marketplaceIds": feed["marketplaceIds"],
                "createdTime": iso(int(feed["created"] * 1000)),
            }
            if feed["report"] is None and (feed["held"] or age < self.feed_seconds):
                answer["processingStatus"] = "IN_QUEUE"
                return 200, answer
            if feed["report"] is None:
                feed["report"] = self._process(feed)
            answer["processingStatus"] = "DONE"
            answer["processingStartTime"] = answer["createdTime"]
            answer["processingEndTime"] = iso(int(time.time() * 1000))
            answer["resultFeedDocumentId"] = feed["report"]
        return 200, answer

    def _process(self, feed):
        """Apply the feed's valid messages; returns the report document's id."""
        document = feed["document"]
        issues = []
        accepted = invalid = 0
        for message in document["messages"]:
            sku = message["sku"]
            problem = None
            if sku not in self.listings:
                problem = ("4000001", "The SKU is not listed.")
            elif sku in self.invalid_skus:
                problem = self.invalid_skus[sku]
            if problem:
                invalid += 1
                issues.append(
                    {
                        "messageId": message["messageId"],
                        "sku": sku,
                        "code": problem[0],
                        "severity": "ERROR",
                        "message": problem[1],
                    }
                )
                continue
            accepted += 1
            if message["operationType"] == "PATCH":
                self._apply(
                    sku, {p["path"].split("/")[-1]: p.get("value") for p in message["patches"]}
                )
        if self.extra_report_sku:
            issues.append(
                {
                    "messageId": len(document["messages"]) + 1,
                    "sku": self.extra_report_sku,
                    "code": "99999",
                    "severity": "ERROR",
                    "message": "Unknown message.",
                }
            )
        report = {
            "header": {
                "sellerId": document["header"]["sellerId"],
                "version": "2.0",
                "feedId": feed["feedId"],
            },
            "issues": issues,
            "summary": {
                "errors": len(issues),
                "warnings": 0,
                "messagesProcessed": accepted + invalid,
                "messagesAccepted": accepted,
                "messagesInvalid": invalid,
            },
        }
        for error in self.report_validator.iter_errors(report):
            self.answer_problems.append(f"report: {error.message}"[:300])
        report_id = "amzn1.tortuga.4.report." + uuid.uuid4().hex
        self.documents[report_id] = {"content_type": "application/json", "content": report}
        return report_id

    def _op_getFeedDocument(self, params, query, body):
        document_id = params["feedDocumentId"]
        with self.lock:
            if document_id not in self.documents:
                return 404, _errors("NotFound", "No such document.")
        return 200, {
            "feedDocumentId": document_id,
            "url": f"{self.url}/documents/download/{document_id}",
        }

    def _op_getOrders(self, params, query, body):
        page_size = int(query.get("MaxResultsPerPage", ["100"])[0])
        if "NextToken" in query:
            after_ms, start = json.loads(bytes.fromhex(query["NextToken"][0]).decode())
        else:
            text = (query.get("LastUpdatedAfter") or query.get("CreatedAfter") or [None])[0]
            if text is None:
                return 400, _errors("InvalidInput", "LastUpdatedAfter or CreatedAfter needed.")
            after_ms = int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
            start = 0
        with self.lock:
            rows = sorted(
                (o for o in self.orders.values() if o["updated_ms"] > after_ms),
                key=lambda o: (o["updated_ms"], o["order"]["AmazonOrderId"]),
            )
        page = rows[start : start + page_size]
        payload = {"Orders": [copy.deepcopy(o["order"]) for o in page]}
        if start + page_size < len(rows):
            payload["NextToken"] = json.dumps([after_ms, start + page_size]).encode().hex()
        payload["LastUpdatedBefore"] = iso(int(time.time() * 1000))
        return 200, {"payload": payload}

    def _op_getOrderItems(self, params, query, body):
        with self.lock:
            order = self.orders.get(params["orderId"])
        if order is None:
            return 404, _errors("NotFound", "No such order.")
        return 200, {
            "payload": {
                "AmazonOrderId": params["orderId"],
                "OrderItems": copy.deepcopy(order["items"]),
            }
        }

    def _op_getOrderAddress(self, params, query, body):
        with self.lock:
            order = self.orders.get(params["orderId"])
        if order is None:
            return 404, _errors("NotFound", "No such order.")
        payload = {"AmazonOrderId": params["orderId"]}
        if order["address"]:
            payload["ShippingAddress"] = order["address"]
        return 200, {"payload": payload}

    def _op_confirmShipment(self, params, query, body):
        with self.lock:
            order = self.orders.get(params["orderId"])
            if order is None:
                return 404, _errors("NotFound", "No such order.")
            self.shipments.append((params["orderId"], body))
            order["order"]["OrderStatus"] = "Shipped"
            self._fed_order += 1
            order["updated_ms"] = int(time.time() * 1000) + self._fed_order
            order["order"]["LastUpdateDate"] = iso(order["updated_ms"])
        return 204, None

    def _op_getInventorySummaries(self, params, query, body):
        with self.lock:
            stock = dict(self.fba)
        summaries = [
            {
                "asin": self.listings.get(sku, {}).get("asin", "B000000000"),
                "fnSku": "X00" + sku[:7],
                "sellerSku": sku,
                "condition": "NewItem",
                "inventoryDetails": {"fulfillableQuantity": quantity},
                "totalQuantity": quantity,
            }
            for sku, quantity in sorted(stock.items())
        ]
        return 200, {
            "payload": {
                "granularity": {"granularityType": "Marketplace", "granularityId": MARKETPLACE_ID},
                "inventorySummaries": summaries,
            }
        }

    def _op_getListingOffersBatch(self, params, query, body):
        responses = []
        for request in body["requests"]:
            sku = unquote(request["uri"].rstrip("/").split("/")[-2])
            with self.lock:
                offers = copy.deepcopy(self.offers.get(sku, []))
            responses.append(
                {
                    "status": {"statusCode": 200, "reasonPhrase": "OK"},
                    "body": {
                        "payload": {
                            "marketplaceId": request["MarketplaceId"],
                            "SKU": sku,
                            "ItemCondition": request["ItemCondition"],
                            "status": "Success",
                            "Identifier": {
                                "MarketplaceId": request["MarketplaceId"],
                                "SellerSKU": sku,
                                "ItemCondition": request["ItemCondition"],
                            },
                            "Summary": {"TotalOfferCount": len(offers)},
                            "Offers": offers,
                        }
                    },
                    "request": {
                        "MarketplaceId": request["MarketplaceId"],
                        "ItemCondition": request["ItemCondition"],
                        "SellerSKU": sku,
                    },
                }
            )
        return 200, {"responses": responses}

    def add_offer(self, sku, seller, price, shipping="0.00", buy_box=False, currency="USD"):
        with self.lock:
            self.offers.setdefault(sku, []).append(
                {
                    "SellerId": seller,
                    "SubCondition": "new",
                    "ShippingTime": {"maximumHours": 48, "minimumHours": 24},
                    "ListingPrice": {"CurrencyCode": currency, "Amount": float(price)},
                    "Shipping": {"CurrencyCode": currency, "Amount": float(shipping)},
                    "IsFulfilledByAmazon": False,
                    "IsBuyBoxWinner": buy_box,
                }
            )


def _errors(code, message):
    return {"errors": [{"code": code, "message": message}]}
