"""Transfer steps racing against a real server (gunicorn, several processes and threads):
a ship and a cancel of one transfer take effect once each at most, in one order; racing
receipts never receive more than was shipped; the stock stays whole throughout."""

import threading
from collections import Counter, defaultdict

import pytest
import requests

from commerce_api.inventory.models import Adjustment
from commerce_api.inventory.services import create_warehouse, set_stock
from commerce_api.products.services import create_product
from tests.support.factories import auth_headers, make_key
from tests.support.servers import gunicorn_server
from tests.support.transfer_helpers import TRANSFERS, check_conserved

ON_HAND = 200


def _setup(tenant, skus=("HOT-1",)):
    source = create_warehouse(tenant.id, {"name": "Source"})["id"]
    destination = create_warehouse(tenant.id, {"name": "Destination"})["id"]
    for sku in skus:
        create_product(tenant.id, {"sku": sku, "title": sku})
        set_stock(
            tenant.id,
            sku,
            {"warehouse_id": source, "quantity": ON_HAND, "reason": "supplier_receipt"},
            "test",
        )
    _, secret = make_key(tenant)
    return source, destination, auth_headers(tenant, secret)


def _race(calls, timeout=60):
    """Run ``calls`` (functions of a session) at once; returns their results in order."""
    results = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(index):
        session = requests.Session()
        try:
            start.wait(timeout=30)
            results[index] = calls[index](session)
        except Exception as error:  # noqa: BLE001 - reported by the caller's assertions
            results[index] = ("exception", repr(error))
        finally:
            session.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads)
    return results


def _post(base, headers, path, body=None):
    def call(session):
        response = session.post(f"{base}{path}", json=body, headers=headers, timeout=30)
        return response.status_code, response.json()

    return call


def _create(session, base, headers, body):
    response = session.post(f"{base}{TRANSFERS}", json=body, headers=headers, timeout=30)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


@pytest.mark.slow
def test_ship_and_cancel_racing_take_effect_once_each_in_one_order(
    app, client, tenant, database_url
):
    source, destination, headers = _setup(tenant)
    transfers, quantity = 10, 7
    with gunicorn_server(database_url, workers=2, threads=4, RATE_LIMIT_ENABLED=0) as base:
        with requests.Session() as session:
            ids = [
                _create(
                    session,
                    base,
                    headers,
                    {
                        "from_warehouse_id": source,
                        "to_warehouse_id": destination,
                        "lines": [{"sku": "HOT-1", "quantity": quantity}],
                    },
                )
                for _ in range(transfers)
            ]
        calls, owners = [], []
        for transfer_id in ids:
            for action in ("ship", "cancel", "ship", "cancel"):
                calls.append(_post(base, headers, f"{TRANSFERS}/{transfer_id}/{action}"))
                owners.append((transfer_id, action))
        results = _race(calls)

    by_transfer = defaultdict(list)
    for (transfer_id, action), result in zip(owners, results, strict=True):
        assert result[0] != "exception", result
        status, body = result
        assert status in (200, 409), (action, body)
        if status == 409:
            assert body["error"]["code"] == "INVALID_TRANSFER_STATUS"
        by_transfer[transfer_id].append((action, status, body))

    shipped_count = 0
    for transfer_id, outcomes in by_transfer.items():
        wins = Counter(action for action, status, _ in outcomes if status == 200)
        assert wins["cancel"] == 1  # a draft or a shipment: cancelled once, never twice
        assert wins["ship"] <= 1  # never shipped twice
        cancel = next(
            body for action, status, body in outcomes if action == "cancel" and status == 200
        )
        assert cancel["data"]["status"] == "cancelled"
        ledger = list(
            Adjustment.select(Adjustment.reason, Adjustment.delta, Adjustment.warehouse)
            .where(Adjustment.reference == transfer_id)
            .order_by(Adjustment.created_at)
            .tuples()
        )
        if wins["ship"]:
            # shipped first, then cancelled in transit: everything went out and came back
            shipped_count += 1
            assert cancel["data"]["shipped_at"] is not None
            assert cancel["data"]["lines"][0]["returned_quantity"] == quantity
            assert ledger == [
                ("transfer_out", -quantity, source),
                ("transfer_in", quantity, source),
            ]
        else:
            # cancelled as a draft: the ship came after and was refused; nothing moved
            assert cancel["data"]["shipped_at"] is None
            assert cancel["data"]["lines"][0]["returned_quantity"] == 0
            assert ledger == []
        final = client.get(f"{TRANSFERS}/{transfer_id}", headers=headers).get_json()["data"]
        assert final == cancel["data"]
    view = check_conserved(client, headers, {"HOT-1": ON_HAND})
    assert view["HOT-1"][source] == (ON_HAND, 0, 0)
    print(f"{shipped_count} of {transfers} transfers were shipped before their cancel")


@pytest.mark.slow
def test_racing_receipts_never_receive_more_than_was_shipped(app, client, tenant, database_url):
    source, destination, headers = _setup(tenant, skus=("HOT-1", "HOT-2"))
    with gunicorn_server(database_url, workers=2, threads=4, RATE_LIMIT_ENABLED=0) as base:
        with requests.Session() as session:
            body = {
                "from_warehouse_id": source,
                "to_warehouse_id": destination,
                "lines": [{"sku": "HOT-1", "quantity": 30}, {"sku": "HOT-2", "quantity": 20}],
            }
            whole = _create(session, base, headers, body)
            partly = _create(session, base, headers, body)
            for transfer_id in (whole, partly):
                response = session.post(
                    f"{base}{TRANSFERS}/{transfer_id}/ship", headers=headers, timeout=30
                )
                assert response.status_code == 200, response.text
        ten = {"lines": [{"sku": "HOT-1", "quantity": 10}, {"sku": "HOT-2", "quantity": 5}]}
        calls = [_post(base, headers, f"{TRANSFERS}/{whole}/receive") for _ in range(4)]
        calls += [_post(base, headers, f"{TRANSFERS}/{partly}/receive", ten) for _ in range(5)]
        calls += [_post(base, headers, f"{TRANSFERS}/{partly}/cancel")]
        results = _race(calls)

    assert not [r for r in results if r[0] == "exception"], results
    whole_results, partly_results, cancel_result = results[:4], results[4:9], results[9]
    # receiving everything: once; the others find it received
    assert sorted(status for status, _ in whole_results) == [200, 409, 409, 409]
    for status, body in whole_results:
        if status == 409:
            assert body["error"]["code"] == "INVALID_TRANSFER_STATUS"
    # partial receipts and a cancel: what was received plus what went back is what shipped
    accepted = sum(1 for status, _ in partly_results if status == 200)
    for status, body in partly_results:
        assert status in (200, 409, 422), body
        if status != 200:
            assert body["error"]["code"] in ("INVALID_TRANSFER_STATUS", "RECEIPT_EXCEEDS_SHIPPED")
    assert cancel_result[0] == 200, cancel_result
    final = client.get(f"{TRANSFERS}/{partly}", headers=headers).get_json()["data"]
    lines = {line["sku"]: line for line in final["lines"]}
    assert lines["HOT-1"]["received_quantity"] == 10 * accepted <= 30
    assert lines["HOT-2"]["received_quantity"] == 5 * accepted <= 20
    for line in lines.values():
        assert line["received_quantity"] + line["returned_quantity"] == line["quantity"]
    assert final["status"] == "cancelled"
    done = client.get(f"{TRANSFERS}/{whole}", headers=headers).get_json()["data"]
    assert done["status"] == "received"
    assert [line["received_quantity"] for line in done["lines"]] == [30, 20]
    view = check_conserved(client, headers, {"HOT-1": ON_HAND, "HOT-2": ON_HAND})
    assert view["HOT-1"][destination] == (30 + 10 * accepted, 0, 0)
