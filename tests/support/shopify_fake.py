"""A contract fake of Shopify's Admin GraphQL API (2025-01) on 127.0.0.1.

Every request must be ``POST /admin/api/2025-01/graphql.json`` with the shop's
``X-Shopify-Access-Token`` (else 404 / 401 as Shopify answers). Its document is parsed and
validated against the vendored published schema (``tests/contracts/shopify-admin-graphql``,
ISC, unedited) with graphql-core (``build_client_schema``, ``validate``), and each of its
variables is coerced to its declared type (``coerce_input_value``; ``Money`` must be a
decimal string, as Shopify's scalar is). A document or variables the schema refuses are
answered with GraphQL ``errors`` and COUNTED in ``refused``: tests assert it stays empty.

Answers are produced by graphql-core's executor over the fake's store (products,
variants, inventory levels per location, orders, fulfillment orders), so they have the
schema's shapes (a shape the schema refuses is listed in ``answer_problems``).

Each query is priced as Shopify documents it (a scalar 0, an object 1, a connection 2 plus
``first`` times its node, a mutation 10, ``nodes(ids:)`` each id) and drawn from a leaky
bucket (``maximum`` points, restoring ``restore`` a second); a query the bucket cannot pay
for now is answered ``THROTTLED`` (counted in ``throttled``), one above the whole bucket
``MAX_COST_EXCEEDED`` (counted in ``refused``). Every answer carries
``extensions.cost.throttleStatus``.

``notify(url, order_gid)`` sends a signed webhook (``X-Shopify-Hmac-Sha256``, Topic,
Shop-Domain, Webhook-Id) for an order of the fake.
"""

import base64
import functools
import gzip
import hashlib
import hmac
import json
import re
import threading
import time
import uuid
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import requests
from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    VariableNode,
    build_client_schema,
    coerce_input_value,
    execute,
    get_named_type,
    is_leaf_type,
    parse,
    type_from_ast,
    validate,
    value_from_ast_untyped,
)

try:  # graphql-core 3.3 reports coercion problems apart from coercing
    from graphql.utilities import validate_input_value
except ImportError:  # 3.2
    validate_input_value = None

from .servers import LocalHTTPServer

CONTRACT = (
    Path(__file__).resolve().parent.parent
    / "contracts"
    / "shopify-admin-graphql"
    / "admin_schema_2025-01.json.gz"
)
SHOP = "fake-shop.myshopify.com"
TOKEN = "shpat_fake_access_token"
SECRET = "fake-webhook-secret"
VERSION = "2025-01"
REASONS = {
    "correction", "cycle_count_available", "damaged", "movement_created", "movement_updated",
    "movement_received", "movement_canceled", "other", "promotion", "quality_control",
    "received", "reservation_created", "reservation_deleted", "reservation_updated",
    "restock", "safety_stock", "shrinkage",
}  # fmt: skip
SET_AT_MOST = 250


def _money(value):
    """Shopify's ``Money`` input: a decimal string."""
    if not isinstance(value, str):
        raise GraphQLError(f"Money must be a decimal string, not {value!r}.")
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise GraphQLError(f"Money must be a decimal string, not {value!r}.") from None
    if not amount.is_finite():
        raise GraphQLError(f"Money must be finite, not {value!r}.")
    return value


@functools.lru_cache(maxsize=1)
def schema():
    data = json.loads(gzip.decompress(CONTRACT.read_bytes()))
    built = build_client_schema(data.get("data", data))
    # graphql-core 3.3 holds the published schema to a rule Shopify's does not keep (a
    # deprecated implementation of a field the interface does not deprecate): documents are
    # still validated against it, the schema's own consistency is not ours to judge
    built._validation_errors = []
    money = built.type_map["Money"]
    money.parse_value = _money
    return built


def coerced_input(value, declared, errors):
    """``value`` coerced to the input type ``declared``; each problem appended to
    ``errors`` as (path, message) (graphql-core 3.2's ``coerce_input_value`` reports them,
    3.3's ``validate_input_value`` does)."""
    if validate_input_value is None:
        return coerce_input_value(
            value, declared, lambda path, invalid, error: errors.append((path, error.message))
        )
    validate_input_value(value, declared, lambda error, path: errors.append((path, error.message)))
    return coerce_input_value(value, declared)


def now_iso():
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cursor(index):
    return base64.b64encode(f"i:{index}".encode()).decode()


def _index(cursor):
    if not cursor:
        return 0
    try:
        return int(base64.b64decode(cursor).decode().split(":")[1]) + 1
    except (ValueError, IndexError):
        raise GraphQLError("Invalid cursor.") from None


def page(items, first=None, after=None, **_):
    """A connection over ``items``: ``nodes``, ``edges``, ``pageInfo``."""
    start = _index(after)
    count = first if first is not None else 50
    chunk = items[start : start + count]
    return {
        "nodes": chunk,
        "edges": [{"cursor": _cursor(start + i), "node": n} for i, n in enumerate(chunk)],
        "pageInfo": {
            "hasNextPage": start + count < len(items),
            "hasPreviousPage": start > 0,
            "endCursor": _cursor(start + len(chunk) - 1) if chunk else None,
            "startCursor": _cursor(start) if chunk else None,
        },
    }


class ShopifyFake(LocalHTTPServer):
    """The fake shop. ``endpoint`` is what ``settings.endpoint`` takes."""

    def __init__(self, maximum=100.0, restore=50.0, delay=0.0, locations=("Main warehouse",)):
        self.schema = schema()
        self.maximum, self.restore, self.delay = float(maximum), float(restore), delay
        self.available, self.leaked_at = float(maximum), time.monotonic()
        self.lock = threading.RLock()
        self.refused = []  # (what, message)
        self.answer_problems = []
        self.throttled = 0
        self.journal = []  # every priced query: (root fields, cost, taken, points left, time)
        self.emptied = 0  # queries before which the bucket is spent (empty_bucket)
        self.calls = {}  # root field -> count
        self.costs = []  # (root fields, cost, monotonic time)
        self.products, self.variants, self.items = {}, {}, {}
        self.levels = {}  # (inventory item gid, location gid) -> available
        self.sets = []  # (inventory item gid, location gid, quantity, compare, time)
        self.orders, self.fulfillment_orders = {}, {}
        self.fulfillments, self.cancellations = [], []
        self.currency = "USD"
        self._ids = 1000
        self.locations = {}
        for name in locations:
            self.add_location(name)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, payload = outer.handle(self.path, dict(self.headers.items()), raw)
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_PUT = do_DELETE = do_POST

        self.serve(Handler)

    # the store --------------------------------------------------------------------------

    def _gid(self, kind):
        with self.lock:
            self._ids += 1
            return f"gid://shopify/{kind}/{self._ids}"

    def add_location(self, name):
        gid = self._gid("Location")
        self.locations[gid] = {"__typename": "Location", "id": gid, "name": name, "isActive": True}
        for item in self.items.values():
            self.levels.setdefault((item["id"], gid), 0)
        return gid

    @property
    def location(self):
        return next(iter(self.locations))

    @property
    def endpoint(self):
        return self.url

    def settings(self, warehouse_id, location=None, **extra):
        return {
            "shop_domain": SHOP,
            "endpoint": self.url,
            "locations": {warehouse_id: location or self.location},
            **extra,
        }

    def credentials(self):
        return {"access_token": TOKEN, "webhook_secret": SECRET}

    def add_variant(self, sku, price="19.99", quantity=0, product=None, status="ACTIVE"):
        """A variant with ``sku`` (of a new product unless ``product`` gid is given), stocked
        at every location with ``quantity`` available; returns the variant gid."""
        with self.lock:
            if product is None:
                product = self._gid("Product")
                self.products[product] = {
                    "__typename": "Product",
                    "id": product,
                    "title": sku,
                    "status": status,
                }
            variant, item = self._gid("ProductVariant"), self._gid("InventoryItem")
            self.items[item] = self._inventory_item(item)
            self.variants[variant] = {
                "__typename": "ProductVariant",
                "id": variant,
                "sku": sku,
                "price": price,
                "product": self.products[product],
                "inventoryItem": self.items[item],
            }
            for location in self.locations:
                self.levels[(item, location)] = quantity
            return variant

    def _inventory_item(self, gid):
        def level(info, locationId):  # noqa: N803 (the schema's argument name)
            if (gid, locationId) not in self.levels:
                return None
            return {
                "__typename": "InventoryLevel",
                "id": f"{gid}?location={locationId}",
                "quantities": lambda info, names: [
                    {
                        "id": f"{gid}?location={locationId}&name={name}",
                        "name": name,
                        "quantity": self.levels.get((gid, locationId), 0)
                        if name == "available"
                        else 0,
                    }
                    for name in names
                ],
            }

        return {"__typename": "InventoryItem", "id": gid, "inventoryLevel": level}

    def variant_of(self, sku):
        (variant,) = [v for v in self.variants.values() if v["sku"] == sku]
        return variant

    def quantity(self, sku, location=None):
        variant = self.variant_of(sku)
        return self.levels.get((variant["inventoryItem"]["id"], location or self.location))

    def set_quantity(self, sku, quantity, location=None):
        """A change made in the Shopify admin (or a sale there)."""
        variant = self.variant_of(sku)
        with self.lock:
            self.levels[(variant["inventoryItem"]["id"], location or self.location)] = quantity

    def add_order(self, lines, currency="USD", address=None, financial="PAID"):
        """An order of ``lines`` [(sku, quantity, unit price text)]; returns its gid."""
        with self.lock:
            gid = self._gid("Order")
            stamp = now_iso()
            line_items, fo_lines = [], []
            total = Decimal("0")
            for sku, quantity, unit in lines:
                line_gid = self._gid("LineItem")
                amount = Decimal(unit) * quantity
                total += amount
                line = {
                    "__typename": "LineItem",
                    "id": line_gid,
                    "sku": sku,
                    "name": sku,
                    "quantity": quantity,
                    "originalTotalSet": {
                        "shopMoney": {"amount": str(amount), "currencyCode": currency}
                    },
                }
                line_items.append(line)
                fo_lines.append(
                    {
                        "id": self._gid("FulfillmentOrderLineItem"),
                        "remainingQuantity": quantity,
                        "totalQuantity": quantity,
                        "lineItem": line,
                    }
                )
            fulfillment_order = {
                "__typename": "FulfillmentOrder",
                "id": self._gid("FulfillmentOrder"),
                "status": "OPEN",
                "order_id": gid,
                "line_items": fo_lines,
            }
            fulfillment_order["lineItems"] = lambda info, **args: page(
                fulfillment_order["line_items"], **args
            )
            self.fulfillment_orders[fulfillment_order["id"]] = fulfillment_order
            order = {
                "__typename": "Order",
                "id": gid,
                "name": f"#{1000 + len(self.orders)}",
                "createdAt": stamp,
                "updatedAt": stamp,
                "cancelledAt": None,
                "currencyCode": currency,
                "displayFinancialStatus": financial,
                "displayFulfillmentStatus": "UNFULFILLED",
                "totalPriceSet": {"shopMoney": {"amount": str(total), "currencyCode": currency}},
                "shippingAddress": address
                or {
                    "name": "Ada Lovelace",
                    "address1": "12 St James's Square",
                    "address2": None,
                    "city": "London",
                    "provinceCode": "LND",
                    "zip": "SW1Y 4JH",
                    "countryCodeV2": "GB",
                },
                "line_items": line_items,
                "fulfillment_order_ids": [fulfillment_order["id"]],
            }
            order["lineItems"] = lambda info, **args: page(order["line_items"], **args)
            order["fulfillmentOrders"] = lambda info, **args: page(
                [self.fulfillment_orders[i] for i in order["fulfillment_order_ids"]], **args
            )
            self.orders[gid] = order
            return gid

    def empty_bucket(self, queries=1):
        """Another app of the shop spends every point just before each of the next
        ``queries`` queries (they are answered THROTTLED)."""
        with self.lock:
            self.emptied += queries

    def refused_count(self):
        return len(self.refused)

    def count(self, field):
        return self.calls.get(field, 0)

    # notifications ----------------------------------------------------------------------

    def notification(self, order_gid, topic="orders/create", secret=SECRET, webhook_id=None):
        """(headers, raw body) of a signed webhook about an order of the fake."""
        order = self.orders[order_gid]
        body = json.dumps(
            {
                "id": int(order_gid.rsplit("/", 1)[1]),
                "admin_graphql_api_id": order_gid,
                "name": order["name"],
                "updated_at": order["updatedAt"],
                "currency": order["currencyCode"],
            }
        ).encode()
        signature = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest())
        headers = {
            "Content-Type": "application/json",
            "X-Shopify-Hmac-Sha256": signature.decode(),
            "X-Shopify-Topic": topic,
            "X-Shopify-Shop-Domain": SHOP,
            "X-Shopify-Webhook-Id": webhook_id or str(uuid.uuid4()),
            "X-Shopify-API-Version": VERSION,
        }
        return headers, body

    def notify(self, url, order_gid, topic="orders/create", secret=SECRET, webhook_id=None):
        """Send the signed webhook to ``url``; returns the response."""
        headers, body = self.notification(order_gid, topic, secret, webhook_id)
        return requests.post(url, data=body, headers=headers, timeout=10)

    # one request ------------------------------------------------------------------------

    def _bucket(self, cost):
        """Draw ``cost`` from the leaky bucket; returns (taken, throttle status)."""
        with self.lock:
            now = time.monotonic()
            self.available = min(
                self.maximum, self.available + (now - self.leaked_at) * self.restore
            )
            self.leaked_at = now
            taken = cost <= self.available
            if taken:
                self.available -= cost
            return taken, {
                "maximumAvailable": self.maximum,
                "currentlyAvailable": int(self.available),
                "restoreRate": self.restore,
            }

    def _refuse(self, what, errors, extensions=None):
        with self.lock:
            self.refused.append((what, errors))
        body = {"errors": [{"message": str(e)} for e in errors]}
        if extensions:
            body["extensions"] = extensions
        return 200, body

    def handle(self, path, headers, raw):
        if self.delay:
            time.sleep(self.delay)
        headers = {k.lower(): v for k, v in headers.items()}
        if path != f"/admin/api/{VERSION}/graphql.json":
            with self.lock:
                self.refused.append((path, "not the Admin GraphQL endpoint"))
            return 404, {"errors": "Not Found"}
        if headers.get("x-shopify-access-token") != TOKEN:
            return 401, {
                "errors": "[API] Invalid API key or access token (unrecognized login or "
                "wrong password)"
            }
        try:
            request = json.loads(raw)
            document_text = request["query"]
            variables = request.get("variables") or {}
            assert isinstance(document_text, str) and isinstance(variables, dict)
        except (ValueError, KeyError, TypeError, AssertionError):
            return self._refuse("body", ["The body is not {query, variables}."])
        try:
            document = parse(document_text)
        except GraphQLError as exc:
            return self._refuse("parse", [exc.message])
        problems = validate(self.schema, document)
        if problems:
            return self._refuse(document_text[:60], [p.message for p in problems])
        operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        operation = operations[0]
        fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        coerced, errors = self._variables(operation, variables)
        if errors:
            return self._refuse(document_text[:60], errors)
        root_type = (
            self.schema.mutation_type
            if operation.operation.value == "mutation"
            else self.schema.query_type
        )
        cost = self._cost(operation.selection_set, root_type, coerced, fragments, root=True)
        if cost > self.maximum:
            return self._refuse(
                document_text[:60],
                [f"Query cost {cost} exceeds the single query max cost limit."],
            )
        with self.lock:
            if self.emptied:
                self.emptied -= 1
                self.available, self.leaked_at = 0.0, time.monotonic()
        taken, status = self._bucket(cost)
        extensions = {
            "cost": {
                "requestedQueryCost": cost,
                "actualQueryCost": cost if taken else None,
                "throttleStatus": status,
            }
        }
        fields = [
            s.name.value for s in operation.selection_set.selections if isinstance(s, FieldNode)
        ]
        with self.lock:
            self.journal.append(
                (fields, cost, taken, status["currentlyAvailable"], time.monotonic())
            )
        if not taken:
            with self.lock:
                self.throttled += 1
            return 200, {
                "errors": [
                    {
                        "message": "Throttled",
                        "extensions": {
                            "code": "THROTTLED",
                            "documentation": "https://shopify.dev/api/usage/rate-limits",
                        },
                    }
                ],
                "extensions": extensions,
            }
        with self.lock:
            for name in fields:
                self.calls[name] = self.calls.get(name, 0) + 1
            self.costs.append((fields, cost, time.monotonic()))
        result = execute(
            self.schema,
            document,
            root_value=_Root(self),
            variable_values=variables,
            type_resolver=lambda value, info, abstract: value.get("__typename"),
        )
        if result.errors:
            with self.lock:
                self.answer_problems.extend(e.message for e in result.errors)
            return 200, {
                "data": result.data,
                "errors": [e.formatted for e in result.errors],
                "extensions": extensions,
            }
        return 200, {"data": result.data, "extensions": extensions}

    def _variables(self, operation, variables):
        coerced, errors = {}, []
        for definition in operation.variable_definitions or ():
            name = definition.variable.name.value
            declared = type_from_ast(self.schema, definition.type)
            if name not in variables:
                if definition.default_value is None and str(declared).endswith("!"):
                    errors.append(f"Variable ${name} of required type {declared} was not given.")
                continue

            found = []
            coerced[name] = coerced_input(variables[name], declared, found)
            for path, message in found:
                where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
                errors.append(f"Variable ${name}{where} got invalid value: {message}")
        declared_names = {d.variable.name.value for d in operation.variable_definitions or ()}
        for name in variables:
            if name not in declared_names:
                errors.append(f"Variable ${name} is not declared by the operation.")
        return coerced, errors

    def _cost(self, selection_set, parent, variables, fragments, root=False):
        total = 0
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, InlineFragmentNode):
                on = (
                    self.schema.type_map[selection.type_condition.name.value]
                    if selection.type_condition
                    else parent
                )
                total += self._cost(selection.selection_set, on, variables, fragments)
                continue
            if isinstance(selection, FragmentSpreadNode):
                fragment = fragments[selection.name.value]
                on = self.schema.type_map[fragment.type_condition.name.value]
                total += self._cost(fragment.selection_set, on, variables, fragments)
                continue
            name = selection.name.value
            if name.startswith("__"):
                continue
            field = parent.fields[name]
            named = get_named_type(field.type)
            if is_leaf_type(named):
                continue
            args = _arguments(selection, variables)
            if named.name.endswith("Connection"):
                size = args.get("first") or args.get("last") or 0
                per, other = 0, 0
                for child in selection.selection_set.selections:
                    cost = self._cost(
                        type(selection.selection_set)(selections=(child,)),
                        named,
                        variables,
                        fragments,
                    )
                    if isinstance(child, FieldNode) and child.name.value in ("nodes", "edges"):
                        per += cost
                    else:
                        other += cost
                total += 2 + size * per + other
                continue
            children = self._cost(selection.selection_set, named, variables, fragments)
            if root and parent is self.schema.mutation_type:
                total += 10 + children
            elif name == "nodes" and "ids" in args:
                total += len(args["ids"]) * (1 + children)
            else:
                total += 1 + children
        return total


class _Root:
    """The root fields the fake answers (the others are not implemented: None/refused)."""

    def __init__(self, fake):
        self.fake = fake

    # queries ----------------------------------------------------------------------------

    def shop(self, info):
        return {
            "name": "Fake shop",
            "currencyCode": self.fake.currency,
            "id": "gid://shopify/Shop/1",
        }

    def locations(self, info, **args):
        return page(list(self.fake.locations.values()), **args)

    def productVariants(self, info, query=None, **args):  # noqa: N802
        wanted = None
        if query:
            wanted = set()
            for quoted, bare in re.findall(r'sku:(?:"((?:[^"\\]|\\.)*)"|(\S+))', query):
                wanted.add(re.sub(r"\\(.)", r"\1", quoted) if quoted else bare)
        with self.fake.lock:
            found = [v for v in self.fake.variants.values() if wanted is None or v["sku"] in wanted]
        return page(found, **args)

    def nodes(self, info, ids):
        fake = self.fake
        found = []
        for gid in ids:
            found.append(
                fake.items.get(gid)
                or fake.variants.get(gid)
                or fake.products.get(gid)
                or fake.orders.get(gid)
                or fake.locations.get(gid)
            )
        return found

    def order(self, info, id):  # noqa: A002
        return self.fake.orders.get(id)

    def orders(self, info, query=None, sortKey=None, **args):  # noqa: N803
        since = None
        if query:
            match = re.search(r"updated_at:>=\s*'?([0-9T:\-.Z+]+)'?", query)
            if not match:
                raise GraphQLError(f"The fake does not read the search {query!r}.")
            since = match.group(1)
        with self.fake.lock:
            found = sorted(
                (o for o in self.fake.orders.values() if since is None or o["updatedAt"] >= since),
                key=lambda o: (o["updatedAt"], o["id"]),
            )
        return page(found, **args)

    # mutations --------------------------------------------------------------------------

    def inventorySetQuantities(self, info, input):  # noqa: N802, A002
        fake = self.fake
        errors = []
        if input["name"] != "available":
            errors.append(_error("INVALID_NAME", ["input", "name"], "The name is not settable."))
        if input["reason"] not in REASONS:
            errors.append(_error("INVALID_REASON", ["input", "reason"], "Invalid reason."))
        quantities = input["quantities"]
        if len(quantities) > SET_AT_MOST:
            errors.append(_error("INVALID_QUANTITY_TOO_HIGH", ["input", "quantities"], "Too many."))
        seen = set()
        with fake.lock:
            for index, entry in enumerate(quantities):
                at = ["input", "quantities", str(index)]
                key = (entry["inventoryItemId"], entry["locationId"])
                if entry["inventoryItemId"] not in fake.items:
                    errors.append(
                        _error(
                            "INVALID_INVENTORY_ITEM",
                            [*at, "inventoryItemId"],
                            "The specified inventory item could not be found.",
                        )
                    )
                elif entry["locationId"] not in fake.locations:
                    errors.append(
                        _error(
                            "INVALID_LOCATION",
                            [*at, "locationId"],
                            "The specified location could not be found.",
                        )
                    )
                elif key not in fake.levels:
                    errors.append(
                        _error(
                            "ITEM_NOT_STOCKED_AT_LOCATION",
                            [*at, "locationId"],
                            "The item is not stocked at the location.",
                        )
                    )
                elif key in seen:
                    errors.append(
                        _error(
                            "NO_DUPLICATE_INVENTORY_ITEM_ID_GROUP_ID_PAIR",
                            at,
                            "The item and location pair is given twice.",
                        )
                    )
                elif entry["quantity"] < 0:
                    errors.append(
                        _error(
                            "INVALID_QUANTITY_NEGATIVE",
                            [*at, "quantity"],
                            "The quantity can't be negative.",
                        )
                    )
                elif entry.get("compareQuantity") is None and not input.get(
                    "ignoreCompareQuantity"
                ):
                    errors.append(
                        _error(
                            "COMPARE_QUANTITY_REQUIRED",
                            [*at, "compareQuantity"],
                            "The compareQuantity argument must be given.",
                        )
                    )
                elif (
                    not input.get("ignoreCompareQuantity")
                    and entry["compareQuantity"] != fake.levels[key]
                ):
                    errors.append(
                        _error(
                            "COMPARE_QUANTITY_STALE",
                            [*at, "compareQuantity"],
                            "The compareQuantity value does not match the stored value.",
                        )
                    )
                seen.add(key)
            if not errors:  # one transaction: all or nothing
                stamp = time.time()
                for entry in quantities:
                    key = (entry["inventoryItemId"], entry["locationId"])
                    fake.levels[key] = entry["quantity"]
                    fake.sets.append((*key, entry["quantity"], entry.get("compareQuantity"), stamp))
        group = None if errors else {"id": fake._gid("InventoryAdjustmentGroup")}
        return {"inventoryAdjustmentGroup": group, "userErrors": errors}

    def productVariantsBulkUpdate(self, info, productId, variants, allowPartialUpdates=False, **_):  # noqa: N802, N803
        fake = self.fake
        product = fake.products.get(productId)
        if product is None:
            return {
                "product": None,
                "productVariants": None,
                "userErrors": [
                    _error("PRODUCT_DOES_NOT_EXIST", ["productId"], "Product does not exist")
                ],
            }
        errors, valid = [], []
        for index, entry in enumerate(variants):
            variant = fake.variants.get(entry.get("id"))
            if variant is None or variant["product"]["id"] != productId:
                errors.append(
                    _error(
                        "PRODUCT_VARIANT_DOES_NOT_EXIST",
                        ["variants", str(index), "id"],
                        "Product variant does not exist",
                    )
                )
            elif entry.get("price") is not None and Decimal(entry["price"]) < 0:
                errors.append(
                    _error(
                        "NEGATIVE_PRICE_VALUE",
                        ["variants", str(index), "price"],
                        "Price can't be negative",
                    )
                )
            else:
                valid.append((variant, entry))
        if errors and not allowPartialUpdates:
            valid = []
        with fake.lock:
            for variant, entry in valid:
                if entry.get("price") is not None:
                    variant["price"] = entry["price"]
        return {
            "product": product,
            "productVariants": [variant for variant, _ in valid],
            "userErrors": errors,
        }

    def productUpdate(self, info, product=None, **_):  # noqa: N802
        fake = self.fake
        found = fake.products.get((product or {}).get("id"))
        if found is None:
            return {
                "product": None,
                "userErrors": [{"field": ["id"], "message": "Product does not exist"}],
            }
        with fake.lock:
            if product.get("status"):
                found["status"] = product["status"]
        return {"product": found, "userErrors": []}

    def fulfillmentCreate(self, info, fulfillment, message=None):  # noqa: N802
        fake = self.fake
        errors = []
        with fake.lock:
            plan = []
            for group in fulfillment["lineItemsByFulfillmentOrder"]:
                fulfillment_order = fake.fulfillment_orders.get(group["fulfillmentOrderId"])
                if fulfillment_order is None or fulfillment_order["status"] not in (
                    "OPEN",
                    "IN_PROGRESS",
                ):
                    errors.append(
                        {"field": ["fulfillment"], "message": "Fulfillment order not open."}
                    )
                    continue
                lines = {line["id"]: line for line in fulfillment_order["line_items"]}
                wanted = group.get("fulfillmentOrderLineItems") or [
                    {"id": i, "quantity": line["remainingQuantity"]} for i, line in lines.items()
                ]
                for entry in wanted:
                    line = lines.get(entry["id"])
                    if line is None or not 0 < entry["quantity"] <= line["remainingQuantity"]:
                        errors.append(
                            {"field": ["fulfillment"], "message": "Invalid line quantity."}
                        )
                    else:
                        plan.append((fulfillment_order, line, entry["quantity"]))
            if errors:
                return {"fulfillment": None, "userErrors": errors}
            touched = set()
            for fulfillment_order, line, quantity in plan:
                line["remainingQuantity"] -= quantity
                touched.add(fulfillment_order["id"])
            order_ids = set()
            for gid in touched:
                fulfillment_order = fake.fulfillment_orders[gid]
                left = sum(line["remainingQuantity"] for line in fulfillment_order["line_items"])
                fulfillment_order["status"] = "CLOSED" if left == 0 else "IN_PROGRESS"
                order_ids.add(fulfillment_order["order_id"])
            for order_id in order_ids:
                order = fake.orders[order_id]
                open_left = sum(
                    line["remainingQuantity"]
                    for gid in order["fulfillment_order_ids"]
                    for line in fake.fulfillment_orders[gid]["line_items"]
                )
                order["displayFulfillmentStatus"] = (
                    "FULFILLED" if open_left == 0 else "PARTIALLY_FULFILLED"
                )
                order["updatedAt"] = now_iso()
            created = {
                "id": fake._gid("Fulfillment"),
                "status": "SUCCESS",
                "tracking": fulfillment.get("trackingInfo"),
                "orders": sorted(order_ids),
            }
            fake.fulfillments.append(created)
        return {"fulfillment": created, "userErrors": []}

    def orderCancel(self, info, orderId, reason, refund, restock, **_):  # noqa: N802, N803
        fake = self.fake
        with fake.lock:
            order = fake.orders.get(orderId)
            if order is None:
                errors = [{"code": "NOT_FOUND", "field": ["orderId"], "message": "Order not found"}]
                return {"job": None, "orderCancelUserErrors": errors, "userErrors": errors}
            if order["cancelledAt"]:
                errors = [
                    {
                        "code": "INVALID",
                        "field": ["orderId"],
                        "message": "Cannot cancel a cancelled order",
                    }
                ]
                return {"job": None, "orderCancelUserErrors": errors, "userErrors": errors}
            order["cancelledAt"] = order["updatedAt"] = now_iso()
            fake.cancellations.append((orderId, reason, refund, restock))
        return {
            "job": {"id": fake._gid("Job"), "done": False},
            "orderCancelUserErrors": [],
            "userErrors": [],
        }


def _arguments(selection, variables):
    """A field's arguments as given (the cost needs ``first``, ``last`` and ``ids``)."""
    found = {}
    for argument in selection.arguments or ():
        if isinstance(argument.value, VariableNode):
            found[argument.name.value] = variables.get(argument.value.name.value)
        else:
            found[argument.name.value] = value_from_ast_untyped(argument.value, variables)
    return found


def _error(code, field, message):
    return {"code": code, "field": field, "message": message}
