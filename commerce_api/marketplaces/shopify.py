"""The ``shopify`` connector: Shopify's Admin GraphQL API (DESIGN 13, docs/connector-shopify.md).

- **The client** (endpoint, token, cost-based throttling): ``shopify_client.ShopifyClient``.
- **Listings**, up to ``SET_AT_MOST`` of a connection in one ``push_listings``:
  1. a listing not linked yet is linked by its SKU (``productVariants``, 15 SKUs a
     query): its variant's gid becomes the listing's ``external_id`` and the product,
     variant and inventory item gids its ``external_refs``, once; a SKU no variant has is
     ``LISTING_NOT_ON_MARKETPLACE``, a SKU two variants have is ``DUPLICATE_SKU`` (nothing
     is pushed for it);
  2. a changed status goes with ``productUpdate`` (inactive: the product ``ARCHIVED``,
     and quantity 0), a changed price with ``productVariantsBulkUpdate`` (per product,
     partial updates allowed);
  3. the quantities with one ``inventorySetQuantities`` (``available``) at each listing's
     location(s) (``settings.locations`` maps our own warehouses to locations): when the
     connection maps several, the listing's quantity is spread over the locations of its
     warehouses in proportion to what they hold for it (``allocation.available_by_place``
     and ``spread``: the allocation rules decide the total, the stock where it is); with
     one, all of it goes to the location of the first of its warehouses that is mapped
     (or the first mapped one). A location we do not map is never written; one we wrote
     that no longer sells the listing is set to 0. Each quantity has its
     ``compareQuantity``: what we last set at that location (``external_refs.levels``).
     Shopify writes nothing of a call with a stale compare quantity: the listings it
     names (at any of their locations) are read again at each location and come back
     ``mismatch`` (pushed again from our state, with Shopify's quantities to compare),
     the others go again.
  Per-item ``userErrors`` are that listing's rejection; the batch partly succeeds.
- **Orders, shipments, cancellations, notifications, check**: ``shopify_orders``.
"""

from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from .allocation import available_by_place, spread
from .base import ListingResult, MarketplaceRejection, MarketplaceUnavailable
from .shopify_orders import ShopifyOrders

QUERY_SKUS = 15  # SKUs per productVariants query
SET_AT_MOST = 250  # quantities per inventorySetQuantities (Shopify's limit)
READ_AT_MOST = 30  # inventory levels per nodes query
ROUNDS = 3  # inventorySetQuantities calls per batch at most (the ones refused go again)

VARIANTS = """query VariantsBySku($query: String!, $first: Int!, $after: String) {
  productVariants(first: $first, after: $after, query: $query) {
    pageInfo { hasNextPage endCursor }
    nodes { id sku price product { id status } inventoryItem { id } }
  }
}"""
SET_QUANTITIES = """mutation SetQuantities($input: InventorySetQuantitiesInput!) {
  inventorySetQuantities(input: $input) { userErrors { code field message } }
}"""
LEVELS = """query Levels($ids: [ID!]!, $location: ID!) {
  nodes(ids: $ids) {
    ... on InventoryItem {
      id
      inventoryLevel(locationId: $location) { quantities(names: ["available"]) { name quantity } }
    }
  }
}"""
SET_PRICES = """mutation SetPrices($productId: ID!, $variants: [ProductVariantsBulkInput!]!) {
  productVariantsBulkUpdate(productId: $productId, variants: $variants, allowPartialUpdates: true) {
    productVariants { id price }
    userErrors { code field message }
  }
}"""
SET_STATUS = """mutation SetStatus($product: ProductUpdateInput!) {
  productUpdate(product: $product) { product { id status } userErrors { field message } }
}"""
STATUSES = {"active": "ACTIVE", "inactive": "ARCHIVED"}


class ShopifyConnector(ShopifyOrders):
    name = "shopify"
    batch_size = SET_AT_MOST

    def push_listings(self, items: Sequence[dict[str, Any]]) -> list[ListingResult]:
        return self._push([dict(item) for item in items], read_first=False)

    def push_product(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """One listing pushed at once (a manual sync, a price applied): linked by its SKU,
        its quantity compared with what Shopify shows right now. A compare mismatch (the
        level changed between that read and the write: a sale in Shopify, or our own
        listing push of the same listing meanwhile) wrote nothing and is no refusal: it is
        unavailable, so the caller tries again from the state then (a sync job retries)."""
        (result,) = self._push(
            [{"payload": product, "idempotency_key": idempotency_key}], read_first=True
        )
        if result.status in ("mismatch", "unavailable"):
            raise MarketplaceUnavailable(
                result.error_message or "Shopify did not set the quantity.",
                code=result.error_code or "QUANTITY_NOT_SET",
                retry_after=result.retry_after or 1,
            )
        if result.status == "rejected":
            raise MarketplaceRejection(
                result.error_message or "Shopify refused the listing.",
                code=result.error_code or "REJECTED",
            )
        return result.answer

    # the steps ------------------------------------------------------------------------

    def _push(self, items, read_first):
        results = [None] * len(items)
        self._link(items, results)
        live = [i for i, result in enumerate(results) if result is None]
        self._place(items, live, results)
        self._set_status(items, [i for i in live if results[i] is None], results)
        self._set_prices(items, [i for i in live if results[i] is None], results)
        pending = [i for i in live if results[i] is None]
        if read_first:
            pairs = [(i, location) for i in pending for location in items[i]["targets"]]
            found = self._levels([(items[i]["refs"]["inventory_item"], loc) for i, loc in pairs])
            for position, (index, location) in enumerate(pairs):
                items[index]["compare"][location] = found[position]
        self._set_quantities(items, pending, results)
        return results

    def _place(self, items, indexes, results):
        """Each listing's ``targets`` ({location: quantity}) and ``compare`` ({location: the
        quantity we last set there}). Several mapped locations: the listing's quantity is
        spread over the locations of its warehouses in proportion to what they hold for it
        (``allocation.available_by_place``, ``spread``); one: all of it there. A mapped
        location we wrote before that no longer sells the listing is set to 0; a location
        we do not map is never written."""
        locations = self.locations
        mapped = set(locations.values())
        spreadable = [
            i for i in indexes if items[i].get("allocation") and items[i].get("product_id")
        ]
        held = {}
        if len(mapped) > 1 and spreadable:
            held = available_by_place(
                ((i, items[i]["product_id"], items[i]["allocation"]) for i in spreadable),
                locations,
            )
        for index in indexes:
            item = items[index]
            refs = item["refs"]
            quantity = item["payload"].get("quantity")
            if quantity is not None and item["payload"].get("status") != "active":
                quantity = 0  # an inactive listing is taken off sale
            if index in held:
                places = held[index]
            else:
                location = self._location_of(item)
                places = {location: 0} if location else {}
            if not places:
                results[index] = _rejected(
                    "LOCATION_NOT_MAPPED",
                    "None of the listing's warehouses is mapped to a Shopify location "
                    "(settings.locations).",
                )
                continue
            targets = {} if quantity is None else spread(int(quantity), places)
            levels = refs.get("levels")
            if quantity is not None and isinstance(levels, dict):
                for location in levels:
                    if location in mapped and location not in targets:
                        targets[location] = 0
            item["targets"] = targets
            item["compare"] = {
                location: _compared(refs, location, item.get("last_quantity"))
                for location in targets
            }

    def _location_of(self, item):
        locations = self.locations
        if not locations:
            return None
        warehouses = item.get("warehouse_ids")
        if warehouses is None:
            return next(iter(locations.values()))
        for warehouse_id in warehouses:
            if warehouse_id in locations:
                return locations[warehouse_id]
        return None

    def _link(self, items, results):
        """Link the listings that have no variant yet (by SKU), once."""
        unlinked = {}
        for index, item in enumerate(items):
            refs = item.get("external_refs") or {}
            if refs.get("variant") and refs.get("inventory_item") and refs.get("product"):
                item["refs"] = dict(refs)
            else:
                unlinked.setdefault(item["payload"]["sku"], []).append(index)
        skus = list(unlinked)
        for start in range(0, len(skus), QUERY_SKUS):
            chunk = skus[start : start + QUERY_SKUS]
            found = self._variants_of(chunk)
            for sku in chunk:
                variants = found.get(sku, [])
                for index in unlinked[sku]:
                    if not variants:
                        results[index] = _rejected(
                            "LISTING_NOT_ON_MARKETPLACE",
                            f"No variant of the shop has the SKU {sku}: create it in the "
                            "Shopify admin (the service never creates products there).",
                        )
                    elif len(variants) > 1:
                        ids = ", ".join(v["id"] for v in variants[:5])
                        results[index] = _rejected(
                            "DUPLICATE_SKU",
                            f"{len(variants)} variants of the shop have the SKU {sku} ({ids}): "
                            "give each its own SKU in the Shopify admin.",
                        )
                    else:
                        variant = variants[0]
                        items[index]["refs"] = {
                            "product": variant["product"]["id"],
                            "variant": variant["id"],
                            "inventory_item": variant["inventoryItem"]["id"],
                            "price": _price_text(variant.get("price")),
                            "status": (
                                "active"
                                if variant["product"].get("status") == "ACTIVE"
                                else "inactive"
                            ),
                        }

    def _variants_of(self, skus):
        """{sku: [variant]} of the variants whose SKU is exactly one of ``skus``."""
        query = " OR ".join(f'sku:"{_quoted(sku)}"' for sku in skus)
        first = min(2 * len(skus), 30)
        found, after = {}, None
        for _ in range(20):
            data = self.graphql(
                "productVariants",
                VARIANTS,
                {"query": query, "first": first, "after": after},
                3 + 3 * first,
            )
            page = data.get("productVariants") or {}
            for variant in page.get("nodes") or []:
                if (
                    isinstance(variant, dict)
                    and variant.get("sku") in skus
                    and variant.get("product")
                    and variant.get("inventoryItem")
                ):
                    found.setdefault(variant["sku"], []).append(variant)
            info = page.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                break
            after = info.get("endCursor")
        return found

    def _set_status(self, items, indexes, results):
        for index in indexes:
            item = items[index]
            wanted = item["payload"].get("status") or "active"
            if item["refs"].get("status") == wanted:
                continue
            data = self.graphql(
                "productUpdate",
                SET_STATUS,
                {"product": {"id": item["refs"]["product"], "status": STATUSES[wanted]}},
                12,
            )
            errors = (data.get("productUpdate") or {}).get("userErrors") or []
            if errors:
                results[index] = _rejected(
                    "PRODUCT_UPDATE_REFUSED", _messages(errors), errors[0].get("code")
                )
            else:
                item["refs"]["status"] = wanted

    def _set_prices(self, items, indexes, results):
        by_product = {}
        for index in indexes:
            item = items[index]
            payload = item["payload"]
            price = _price_text(payload.get("price"))
            if price is None or item["refs"].get("price") == price:
                continue
            currency = payload.get("currency")
            shop_currency = self.shop_currency()
            if currency and currency != shop_currency:
                results[index] = _rejected(
                    "CURRENCY_MISMATCH",
                    f"The listing is priced in {currency}; the shop sells in {shop_currency}.",
                )
                continue
            by_product.setdefault(item["refs"]["product"], []).append((index, price))
        for product_id, entries in by_product.items():
            variants = [{"id": items[i]["refs"]["variant"], "price": p} for i, p in entries]
            data = self.graphql(
                "productVariantsBulkUpdate",
                SET_PRICES,
                {"productId": product_id, "variants": variants},
                12,
            )
            errors = (data.get("productVariantsBulkUpdate") or {}).get("userErrors") or []
            refused = _by_index(errors, "variants", len(entries))
            for position, (index, price) in enumerate(entries):
                error = refused.get(position)
                if error is not None:
                    results[index] = _rejected("PRICE_REFUSED", error["message"], error["code"])
                else:
                    items[index]["refs"]["price"] = price

    def _set_quantities(self, items, indexes, results):
        """One ``inventorySetQuantities`` with every listing's locations, each with its
        compare quantity; Shopify writes nothing of a call with a stale one: the listings
        it names (at any of their locations) are read again and come back ``mismatch``,
        the others go again."""
        entries = []  # (listing index, location, quantity)
        for index in indexes:
            item = items[index]
            if not item["targets"]:  # nothing of the stock is ours to push
                results[index] = self._accepted(item, None)
                continue
            entries += [(index, loc, quantity) for loc, quantity in item["targets"].items()]
        mismatched = set()
        for _ in range(ROUNDS):
            if not entries:
                break
            quantities = [
                {
                    "inventoryItemId": items[i]["refs"]["inventory_item"],
                    "locationId": location,
                    "quantity": quantity,
                    "compareQuantity": items[i]["compare"][location],
                }
                for i, location, quantity in entries
            ]
            data = self.graphql(
                "inventorySetQuantities",
                SET_QUANTITIES,
                {"input": {"name": "available", "reason": "correction", "quantities": quantities}},
                11,
            )
            errors = (data.get("inventorySetQuantities") or {}).get("userErrors") or []
            if not errors:
                for index in dict.fromkeys(i for i, _, _ in entries):
                    results[index] = self._accepted(items[index], items[index]["targets"])
                entries = []
                break
            refused = _by_index(errors, "quantities", len(entries))
            stale = {
                i
                for position, (i, _, _) in enumerate(entries)
                if (refused.get(position) or {}).get("code") == "COMPARE_QUANTITY_STALE"
            }
            for position, (index, _, _) in enumerate(entries):
                error = refused.get(position)
                if error is not None and index not in stale and results[index] is None:
                    results[index] = _rejected("QUANTITY_REFUSED", error["message"], error["code"])
            mismatched |= stale
            # Shopify wrote nothing of the call: the others go again
            entries = [e for e in entries if e[0] not in stale and results[e[0]] is None]
        for index in dict.fromkeys(i for i, _, _ in entries):  # refused each time
            results[index] = ListingResult(
                "unavailable",
                error_code="QUANTITY_NOT_SET",
                error_message="Shopify refused the batch's quantities each time.",
                retry_after=5,
            )
        if mismatched:
            self._mismatched(items, sorted(mismatched), results)

    def _mismatched(self, items, indexes, results):
        """The listings whose compare quantity was stale: what Shopify shows at each of
        their locations, to compare with when they are pushed again from our state."""
        pairs = [(i, location) for i in indexes for location in items[i]["targets"]]
        found = self._levels([(items[i]["refs"]["inventory_item"], loc) for i, loc in pairs])
        shown = {i: {} for i in indexes}
        for position, (index, location) in enumerate(pairs):
            shown[index][location] = found[position]
        for index in indexes:
            item = items[index]
            levels = shown[index]
            total = sum(levels.values())
            stale = [loc for loc in levels if levels[loc] != item["compare"][loc]]
            refs = {**item["refs"], "location": next(iter(levels)), "levels": levels}
            described = ", ".join(
                f"{levels[loc]} at {loc} where we last set {item['compare'][loc]}"
                for loc in stale or levels
            )
            results[index] = ListingResult(
                "mismatch",
                answer={"quantity": total, "refs": refs},
                error_code="COMPARE_MISMATCH",
                error_message=(
                    f"Shopify showed {described}: nothing was overwritten; the listing is "
                    "pushed again from our current state."
                ),
            )

    def _levels(self, pairs):
        """{position in ``pairs`` ((inventory item, location)): the available quantity
        Shopify shows for the item at the location} (0 where it is not stocked there)."""
        by_location = {}
        for position, (_, location) in enumerate(pairs):
            by_location.setdefault(location, []).append(position)
        found = {}
        for location, positions in by_location.items():
            for start in range(0, len(positions), READ_AT_MOST):
                chunk = positions[start : start + READ_AT_MOST]
                ids = [pairs[p][0] for p in chunk]
                data = self.graphql(
                    "inventoryLevels", LEVELS, {"ids": ids, "location": location}, 3 * len(ids)
                )
                nodes = {
                    node.get("id"): node
                    for node in data.get("nodes") or []
                    if isinstance(node, dict)
                }
                for position in chunk:
                    node = nodes.get(pairs[position][0]) or {}
                    level = node.get("inventoryLevel") or {}
                    quantity = 0
                    for entry in level.get("quantities") or []:
                        if entry.get("name") == "available" and isinstance(
                            entry.get("quantity"), int
                        ):
                            quantity = max(0, entry["quantity"])
                    found[position] = quantity
        return found

    def _accepted(self, item, targets):
        """Accepted; ``targets``: what was set at each location (None: no quantity)."""
        payload = item["payload"]
        refs = {**item["refs"]}
        quantity = None
        if targets is not None:
            quantity = sum(targets.values())
            refs["location"] = next(iter(targets))
            refs["levels"] = dict(targets)
        return ListingResult(
            "accepted",
            answer={
                "external_id": refs["variant"],
                "status": payload.get("status") or "active",
                "price": payload.get("price"),
                "currency": payload.get("currency") or self.shop_currency(),
                "quantity": quantity,
                "refs": refs,
            },
        )


def _compared(refs, location, last_quantity):
    """The quantity we last set at ``location`` (the compare quantity): from the listing's
    ``levels``; before they were kept, its quantity at its one location."""
    levels = refs.get("levels")
    if isinstance(levels, dict):
        value = levels.get(location, 0)
        return value if isinstance(value, int) and value >= 0 else 0
    if refs.get("location") in (None, location):
        return int(last_quantity or 0)
    return 0


def _rejected(code, message, shopify_code=None):
    return ListingResult(
        "rejected", error_code=str(shopify_code or code)[:64], error_message=str(message)[:500]
    )


def _messages(errors):
    return "; ".join(str(e.get("message") or "") for e in errors if isinstance(e, dict))[:500]


def _by_index(errors, list_name, count):
    """{position: {code, message}} of per-item userErrors (``field``: [..., list_name,
    "3", ...]); an error naming no item is every item's."""
    found = {}
    for error in errors:
        if not isinstance(error, dict):
            continue
        entry = {
            "code": str(error.get("code") or "REFUSED")[:64],
            "message": str(error.get("message") or "Shopify refused it.")[:500],
        }
        field = error.get("field") or []
        position = None
        if list_name in field:
            at = field.index(list_name) + 1
            if at < len(field) and str(field[at]).isdigit():
                position = int(field[at])
        if position is None:
            for each in range(count):
                found.setdefault(each, entry)
        elif position < count:
            found.setdefault(position, entry)
    return found


def _price_text(value):
    """A price as Shopify's Money text with two decimals (None: no price)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    if not amount.is_finite():
        return None
    return str(amount.quantize(Decimal("0.01")))


def _quoted(sku):
    return sku.replace("\\", "\\\\").replace('"', '\\"')
