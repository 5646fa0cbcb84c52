"""Helpers of the transfer tests: a two-warehouse tenant, and the conservation check read
through HTTP (records, ledgers, transfers)."""

from collections import defaultdict

from tests.support.factories import create_product
from tests.support.inventory_helpers import check_ledger, make_warehouse, set_stock

TRANSFERS = "/api/inventory/transfers"


def make_transfer(client, headers, source, destination, lines, **extra):
    body = {"from_warehouse_id": source, "to_warehouse_id": destination, "lines": lines, **extra}
    response = client.post(TRANSFERS, json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def act(client, headers, transfer_id, action, body=None):
    """POST ``/:id/<action>``; returns the response."""
    path = f"{TRANSFERS}/{transfer_id}/{action}"
    if body is None:
        return client.post(path, headers=headers)
    return client.post(path, json=body, headers=headers)


def setup_two_warehouses(client, headers, stock):
    """Products ``stock`` {sku: on_hand in the source}; returns (source id, destination id)."""
    source = make_warehouse(client, headers, name="Source")["id"]
    destination = make_warehouse(client, headers, name="Destination")["id"]
    for sku, quantity in stock.items():
        create_product(client, headers, sku=sku, gtin=None)
        set_stock(client, headers, sku, source, quantity)
    return source, destination


def _all(client, headers, path, **query):
    items, cursor = [], None
    for _ in range(1000):
        params = {"limit": 200, **query, **({"cursor": cursor} if cursor else {})}
        response = client.get(path, query_string=params, headers=headers)
        assert response.status_code == 200, response.get_json()
        items += response.get_json()["data"]
        cursor = response.get_json()["meta"]["nextCursor"]
        if not cursor:
            return items
    raise AssertionError("too many pages")


def stock_view(client, headers, skus):
    """Per SKU: {warehouse id: (on_hand, reserved, incoming)} and the record's totals,
    checked against each other and against the SKU's ledger (all read through HTTP)."""
    view = {}
    for sku in skus:
        response = client.get(f"/api/inventory/{sku}", headers=headers)
        assert response.status_code == 200, response.get_json()
        record = response.get_json()["data"]
        entries = {
            e["warehouse_id"]: (e["on_hand"], e["reserved"], e["incoming"])
            for e in record["warehouses"]
        }
        assert record["total_on_hand"] == sum(v[0] for v in entries.values())
        assert record["total_incoming"] == sum(v[2] for v in entries.values())
        ledger = defaultdict(int)
        for adjustment in _all(client, headers, f"/api/inventory/{sku}/adjustments"):
            ledger[adjustment["warehouse_id"]] += adjustment["delta"]
        for warehouse_id, (on_hand, _, _) in entries.items():
            assert ledger[warehouse_id] == on_hand, (sku, warehouse_id)
        view[sku] = entries
    return view


def check_conserved(client, headers, expected_totals):
    """Every SKU's sum over warehouses of on_hand + incoming equals ``expected_totals``;
    each warehouse's ``incoming`` equals what its transfers in transit carry; the
    database's ledger chains are whole. Returns the stock view."""
    view = stock_view(client, headers, expected_totals)
    for sku, total in expected_totals.items():
        assert sum(on_hand + incoming for on_hand, _, incoming in view[sku].values()) == total
    in_transit = defaultdict(int)
    for transfer in _all(client, headers, TRANSFERS, status="in_transit"):
        for line in transfer["lines"]:
            in_transit[(line["sku"], transfer["to_warehouse_id"])] += line["in_transit_quantity"]
    for sku, entries in view.items():
        for warehouse_id, (_, _, incoming) in entries.items():
            assert incoming == in_transit[(sku, warehouse_id)], (sku, warehouse_id)
    check_ledger()
    return view
