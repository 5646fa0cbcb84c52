"""Concurrent stock changes against a real server: every change is counted, the ledger
stays one unbroken chain per stock row, and nobody gets a 500 or "database is locked"."""

import random
import threading
import time
from collections import defaultdict

import pytest
import requests

from commerce_api.inventory.services import create_warehouse
from commerce_api.products.services import create_product
from tests.support.factories import auth_headers, make_key
from tests.support.inventory_helpers import check_ledger
from tests.support.servers import gunicorn_server

CLIENTS = 8
REQUESTS_PER_CLIENT = 50
BULK_EVERY = 5  # every fifth request of a client is a bulk update


@pytest.mark.slow
def test_concurrent_puts_and_bulk_updates_are_all_counted(app, tenant, database_url):
    create_product(tenant.id, {"sku": "HOT-1", "title": "Hot item"})
    main = create_warehouse(tenant.id, {"name": "Main"})["id"]
    spare = create_warehouse(tenant.id, {"name": "Spare"})["id"]
    _, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    failures, applied = [], []
    lock = threading.Lock()

    with gunicorn_server(database_url, workers=2, RATE_LIMIT_ENABLED=0) as base:
        start = threading.Barrier(CLIENTS)

        def client(n):
            rng = random.Random(n)
            session = requests.Session()
            session.headers.update(headers)
            done = 0
            try:
                start.wait(timeout=30)
                for i in range(REQUESTS_PER_CLIENT):
                    if i % BULK_EVERY == BULK_EVERY - 1:
                        updates = [
                            {"sku": "HOT-1", "warehouse_id": main, "quantity": rng.randrange(500)},
                            {"sku": "HOT-1", "warehouse_id": spare, "quantity": rng.randrange(50)},
                            {"sku": "HOT-1", "warehouse_id": main, "quantity": rng.randrange(500)},
                        ]
                        for item in updates:
                            item["reason"] = "cycle_count"
                        response = session.post(
                            f"{base}/api/inventory/bulk", json={"updates": updates}, timeout=30
                        )
                        ok = response.status_code == 200 and response.json()["data"] == {
                            "updated": 3,
                            "failed": 0,
                            "errors": [],
                        }
                        count = 3
                    else:
                        body = {
                            "warehouse_id": main,
                            "quantity": rng.randrange(500),
                            "reason": rng.choice(("supplier_receipt", "damage", "correction")),
                        }
                        response = session.put(f"{base}/api/inventory/HOT-1", json=body, timeout=30)
                        ok = response.status_code == 200
                        count = 1
                    if not ok:
                        with lock:
                            failures.append((response.status_code, response.text[:300]))
                    else:
                        done += count
            except Exception as error:  # noqa: BLE001 - reported by the assertions
                with lock:
                    failures.append(("exception", repr(error)))
            finally:
                session.close()
                with lock:
                    applied.append(done)

        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        elapsed = time.monotonic() - started
        assert not any(thread.is_alive() for thread in threads)

        # read everything back through the API
        session = requests.Session()
        session.headers.update(headers)
        record = session.get(f"{base}/api/inventory/HOT-1", timeout=30).json()["data"]
        adjustments, cursor = [], None
        for _ in range(100):
            url = f"{base}/api/inventory/HOT-1/adjustments?quantity_type=all&limit=200&order=asc"
            page = session.get(url + (f"&cursor={cursor}" if cursor else ""), timeout=30).json()
            adjustments += page["data"]
            cursor = page["meta"]["nextCursor"]
            if cursor is None:
                break
        session.close()

    assert failures == [], failures[:5]
    assert not any("locked" in str(text) for _, text in failures)
    per_client_bulks = REQUESTS_PER_CLIENT // BULK_EVERY
    expected = CLIENTS * ((REQUESTS_PER_CLIENT - per_client_bulks) + 3 * per_client_bulks)
    assert sum(applied) == expected
    assert len(adjustments) == expected  # every change counted, exactly once

    chains = defaultdict(list)
    for adjustment in adjustments:
        chains[adjustment["warehouse_id"]].append(adjustment)
    final = {w["warehouse_id"]: w["on_hand"] for w in record["warehouses"]}
    assert set(chains) == {main, spare}
    for warehouse_id, chain in chains.items():
        chain.sort(key=lambda a: a["sequence"])
        assert [a["sequence"] for a in chain] == list(range(1, len(chain) + 1))
        previous = 0
        for adjustment in chain:
            assert adjustment["quantity_type"] == "on_hand"
            assert adjustment["before_quantity"] == previous, adjustment
            assert adjustment["delta"] == adjustment["after_quantity"] - previous
            previous = adjustment["after_quantity"]
        assert sum(a["delta"] for a in chain) == final[warehouse_id] == previous
        # the ledger's time order is its chain order
        stamps = [a["created_at"] for a in chain]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
        # listed oldest first, the API's order is the chain's order too
        assert [a["id"] for a in adjustments if a["warehouse_id"] == warehouse_id] == [
            a["id"] for a in chain
        ]
    assert record["total_on_hand"] == sum(final.values())
    assert check_ledger() == expected
    assert elapsed < 60, f"took {elapsed:.1f}s"
