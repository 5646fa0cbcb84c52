"""The one leased-claim mechanism (commerce_api/leases.py), on the engine the suite runs on:
claim order and exclusivity (two connections), renew, release, the expired-lease reclaim
and sweep condition, the retry backoff."""

import threading

import pytest

from commerce_api import leases
from commerce_api.db import db, is_postgres, write_transaction
from commerce_api.leases import Lease, lease_free
from commerce_api.webhooks.models import WebhookDelivery

NOW = 1_700_000_000_000


def lease(by_rowid=False):
    """A queue over webhook_delivery rows: pending and free, in event order."""
    return Lease(
        WebhookDelivery,
        lease="lease_until",
        holder="lease_token",
        due=(
            "{WebhookDelivery.status} = 'pending' AND "
            + lease_free("{WebhookDelivery.lease_until}")
        ),
        order="{WebhookDelivery.event_seq}",
        setting=(
            "{WebhookDelivery.lease_until} = {p:until}, {WebhookDelivery.lease_token} = {p:token}"
        ),
        claimable="{WebhookDelivery.status} = 'pending'",
        returning=("id", "lease_token", "lease_until"),
        by_rowid=by_rowid,
    )


LEASE = lease()


def rows(count, status="pending"):
    WebhookDelivery.insert_many(
        [
            {
                "id": f"d{n:03d}",
                "tenant_id": "t1",
                "endpoint_id": "e1",
                "event_id": f"ev{n}",
                "event_type": "order.created",
                "event_seq": count - n,  # the claim order is the reverse of the ids
                "status": status,
                "next_attempt_at": NOW + n,
            }
            for n in range(count)
        ]
    ).execute()


def claim(token, limit, now=NOW, lease_ms=1000, queue=LEASE):
    with write_transaction():
        return queue.claim({"now": now, "limit": limit, "until": now + lease_ms, "token": token})


def test_a_named_claim_binds_the_same_on_both_engines(app):
    """Named templates: one mapping, no per-engine order of the due and SET parameters."""
    named = Lease(
        WebhookDelivery,
        lease="lease_until",
        holder="lease_token",
        due="{WebhookDelivery.status} = 'pending' AND ({WebhookDelivery.lease_until} IS NULL"
        " OR {WebhookDelivery.lease_until} <= {p:now})",
        order="{WebhookDelivery.event_seq}",
        setting="{WebhookDelivery.lease_until} = {p:until},"
        " {WebhookDelivery.lease_token} = {p:token}",
        claimable="{WebhookDelivery.status} = 'pending'",
        returning=("id", "lease_token", "lease_until"),
    )
    with pytest.raises(TypeError), write_transaction():
        named.claim((NOW, 2, NOW + 1000, "w1:1"))  # no positions: no order per engine
    rows(3)
    with write_transaction():
        claimed = named.claim({"now": NOW, "limit": 2, "until": NOW + 1000, "token": "w1:1"})
    assert sorted(claimed) == [("d001", "w1:1", NOW + 1000), ("d002", "w1:1", NOW + 1000)]
    assert held() == {"d001": ("w1:1", NOW + 1000), "d002": ("w1:1", NOW + 1000)}


def held():
    return {
        row.id: (row.lease_token, row.lease_until)
        for row in WebhookDelivery.select().where(WebhookDelivery.lease_token.is_null(False))
    }


@pytest.mark.parametrize("by_rowid", [False, True])
def test_a_claim_takes_the_due_rows_in_order_and_leases_them(app, by_rowid):
    rows(5)
    WebhookDelivery.update(status="succeeded").where(WebhookDelivery.id == "d004").execute()
    claimed = claim("w1:1", 3, queue=lease(by_rowid))
    # event_seq order: d003 (1), d002 (2), d001 (3); d004 is not claimable
    assert sorted(claimed, key=lambda row: row[0], reverse=True) == [
        ("d003", "w1:1", NOW + 1000),
        ("d002", "w1:1", NOW + 1000),
        ("d001", "w1:1", NOW + 1000),
    ]
    # what is leased is not claimed again while the lease lasts
    assert claim("w2:1", 10, now=NOW + 999) == [("d000", "w2:1", NOW + 1999)]
    assert claim("w3:1", 10, now=NOW + 999) == []


def test_an_expired_lease_is_claimed_again_and_swept(app):
    rows(2)
    claim("w1:1", 2, lease_ms=1000)
    expired = WebhookDelivery.select(WebhookDelivery.id).where(LEASE.expired(NOW + 1000))
    assert list(expired) == []  # the lease still holds at its last millisecond
    assert claim("w2:1", 2, now=NOW + 1000) == []
    expired = WebhookDelivery.select(WebhookDelivery.id).where(LEASE.expired(NOW + 1001))
    assert sorted(row.id for row in expired) == ["d000", "d001"]
    # the holder died: its rows go to the next claim after the lease ran out
    again = claim("w2:1", 2, now=NOW + 1001)
    assert sorted(again) == [("d000", "w2:1", NOW + 2001), ("d001", "w2:1", NOW + 2001)]


def test_renew_extends_only_the_holders_leases_up_to_the_cap(app):
    rows(3)
    claim("w1:1", 2)  # d002, d001
    claim("w2:1", 1)  # d000
    WebhookDelivery.update(next_attempt_at=NOW + 9000).execute()  # the cap of the rows
    WebhookDelivery.update(next_attempt_at=NOW + 3000).where(WebhookDelivery.id == "d001").execute()
    with write_transaction():
        renewed = LEASE.renew(
            ["d000", "d001", "d002"],
            "w1:1",
            NOW + 5000,
            held=WebhookDelivery.status == "pending",
            cap="next_attempt_at",
        )
    assert sorted(renewed) == [("d001",), ("d002",)]
    # d001's lease stops at its cap; d000 is another holder's, untouched
    assert held() == {
        "d000": ("w2:1", NOW + 1000),
        "d001": ("w1:1", NOW + 3000),
        "d002": ("w1:1", NOW + 5000),
    }
    with write_transaction():
        assert LEASE.renew(["d002"], "w1:1", NOW + 9000, held=WebhookDelivery.status == "x") == []
    assert held()["d002"] == ("w1:1", NOW + 5000)


def test_release_gives_the_lease_back_without_an_attempt(app):
    rows(2)
    claim("w1:1", 2)
    fence = (WebhookDelivery.id == "d001") & (WebhookDelivery.lease_token == "w1:1")
    assert LEASE.release(fence, {"attempt_count": WebhookDelivery.attempt_count}) == 1
    assert LEASE.release(fence) == 0  # given back already: the holder no longer has it
    assert set(held()) == {"d000"}
    row = WebhookDelivery.get_by_id("d001")
    assert (row.lease_until, row.lease_token, row.attempt_count) == (None, None, 0)
    # claimable again at once, before the old lease would have run out
    assert claim("w2:1", 10, now=NOW + 1) == [("d001", "w2:1", NOW + 1001)]


def test_two_connections_claim_different_rows(app):
    rows(10)
    first_claimed = threading.Event()
    finish_first = threading.Event()
    results = {}

    def worker(name, limit, hold):
        with db.connection_context(), write_transaction():
            results[name] = claim(name + ":1", limit)
            if hold:
                first_claimed.set()
                assert finish_first.wait(20)

    first = threading.Thread(target=worker, args=("w1", 4, True))
    first.start()
    assert first_claimed.wait(20)
    second = threading.Thread(target=worker, args=("w2", 10, False))
    second.start()
    if is_postgres():
        # SKIP LOCKED: the second claim takes the other rows without waiting
        second.join(20)
        assert not second.is_alive()
        finish_first.set()
        first.join(20)
    else:
        # the SQLite write lock: the second claim waits for the first to commit
        second.join(0.3)
        assert second.is_alive()
        finish_first.set()
        first.join(20)
        second.join(20)
    assert not first.is_alive() and not second.is_alive()
    one = {row[0] for row in results["w1"]}
    two = {row[0] for row in results["w2"]}
    assert len(one) == 4 and len(two) == 6 and not one & two
    assert {token for token, _ in held().values()} == {"w1:1", "w2:1"}


def test_backoff_exponential_capped_with_jitter(monkeypatch):
    assert [leases.backoff_seconds(n, 2.0, 20.0) for n in (0, 1, 2, 3, 4, 5)] == [
        2.0,
        2.0,
        4.0,
        8.0,
        16.0,
        20.0,
    ]
    monkeypatch.setattr(leases.random, "random", lambda: 1.0)
    assert leases.delay_ms(8.0, jitter=0.1) == 8800
    assert leases.delay_ms(8.0) == 8000
    monkeypatch.setattr(leases.random, "random", lambda: 0.0)
    assert leases.delay_ms(8.0, jitter=0.1) == 8000


def test_retry_after_is_a_floor_or_replaces_the_delay_within_bounds():
    floor = {"cap": 100.0}
    assert leases.honour_retry_after(10.0, None, **floor) == 10.0
    assert leases.honour_retry_after(10.0, 3.0, **floor) == 10.0  # never sooner than due
    assert leases.honour_retry_after(10.0, 30.0, **floor) == 30.0
    assert leases.honour_retry_after(10.0, 1e9, **floor) == 100.0
    shortens = {"cap": 100.0, "minimum": 0.5, "shortens": True}
    assert leases.honour_retry_after(10.0, 3.0, **shortens) == 3.0
    assert leases.honour_retry_after(10.0, 0.0, **shortens) == 0.5
    assert leases.honour_retry_after(10.0, 1e9, **shortens) == 100.0


def test_a_due_probe_looks_without_claiming(app):
    """``DueProbe``: one read (``{p:now}``), nothing held by it."""
    probe = leases.DueProbe(
        WebhookDelivery,
        "{WebhookDelivery.status} = 'pending' AND {WebhookDelivery.next_attempt_at} <= {p:now}",
    )
    assert not probe(NOW)
    rows(2)  # due at NOW and NOW + 1
    assert not probe(NOW - 1)
    assert probe(NOW)
    assert held() == {}
