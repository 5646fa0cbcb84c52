"""A late Amazon feed never overwrites a newer value unnoticed (issue 32, ``batches``).

Amazon processes a ``JSON_LISTINGS_FEED`` minutes later, in no documented order with
patches: a feed carrying an old quantity may land after a newer patch. The listing pushed
anew keeps the feed as ``superseded``, stays ``submitted`` until the feed is processed,
and is pushed again when the feed landed: Amazon ends with the current quantity, and the
listing is ``in_sync`` only then. The fake holds feeds unprocessed until told
(``hold_feeds``/``process_feeds``); every test asserts it refused nothing.
"""

import time

import pytest

from commerce_api.marketplaces import batches
from commerce_api.marketplaces.base import ListingResult
from commerce_api.marketplaces.listing_push import ClaimedListing
from commerce_api.marketplaces.models import SyncAttempt
from commerce_api.products.models import Listing, Product
from tests.marketplaces.test_amazon import (
    MARKETPLACE,
    _listed,
    assert_contract_kept,
    connect_amazon,
    listing_of,
    running_worker,
)
from tests.support.amazon_fake import AmazonFake
from tests.support.orders_support import make_own_warehouse, stock_up
from tests.support.waiting import wait_for


@pytest.fixture
def fake():
    with AmazonFake(feed_seconds=0.3) as running:
        yield running
        assert_contract_kept(running)


def _status(sku):
    return Listing.select().join(Product).where(Product.sku == sku).get().sync_status


def _submission(sku):
    return Listing.select().join(Product).where(Product.sku == sku).get().submission or {}


@pytest.mark.slow
def test_a_feed_processed_after_a_newer_patch_is_pushed_over(
    client, headers, tenant, database_url, fake
):
    skus = _listed(tenant, fake, 8, prefix="LATE")
    first = skus[0]
    warehouse = make_own_warehouse(tenant)
    connect_amazon(tenant, fake)
    fake.hold_feeds()
    stock_up(tenant, warehouse, {sku: 17 for sku in skus})  # 8 pending: one feed
    with running_worker(database_url):
        assert wait_for(
            lambda: Listing.select().where(Listing.sync_status == "submitted").count() == 8, 30
        )
        (feed_id,) = fake.held_feeds()
        assert listing_of(client, headers, first)["submission"]["id"] == feed_id

        # a stock change while the feed is unprocessed: pushed at once, as a patch
        response = client.put(
            f"/api/inventory/{first}",
            json={"warehouse_id": warehouse, "quantity": 52, "reason": "supplier_receipt"},
            headers=headers,
        )
        assert response.status_code == 200, response.get_json()
        assert wait_for(lambda: fake.listings[first]["quantity"] == 52, 20)
        assert wait_for(lambda: _submission(first).get("kind") == "patch", 20)
        # the patch is confirmed (Amazon shows 52) and read again, yet the listing stays
        # submitted: the feed with 17 may still land over it
        assert wait_for(
            lambda: fake.count("getListingsItem") >= 2 or _status(first) != "submitted", 30
        )
        listing = listing_of(client, headers, first)
        assert listing["sync_status"] == "submitted", listing
        assert listing["submission"]["kind"] == "patch"
        assert [w["id"] for w in listing["submission"]["superseded"]] == [feed_id]

        fake.process_feeds()  # the old feed lands now, over the newer patch
        assert fake.listings[first]["quantity"] == 17
        assert wait_for(lambda: _status(first) == "in_sync", 60)
        assert fake.listings[first]["quantity"] == 52  # pushed again before in_sync
        assert wait_for(
            lambda: Listing.select().where(Listing.sync_status == "in_sync").count() == 8, 60
        )
    listing = listing_of(client, headers, first)
    assert listing["quantity"] == 52 and listing["submission"] is None
    assert fake.listings[first]["quantity"] == 52
    for sku in skus[1:]:
        assert fake.listings[sku]["quantity"] == 17
        assert listing_of(client, headers, sku)["quantity"] == 17
    assert Listing.select().where(Listing.submission.is_null(False)).count() == 0
    (row,) = SyncAttempt.select().where(SyncAttempt.operation == "late_write")
    assert row.sku == first and row.error_code == "LATE_WRITE"
    assert row.details["superseded"][0]["id"] == feed_id
    # the feed's report named nothing unknown: no note about the other listings' messages
    assert SyncAttempt.select().where(SyncAttempt.operation == "submission_report").count() == 0
    assert fake.count("patchListingsItem") == 2
    assert_contract_kept(fake)


# the rule, unit by unit ---------------------------------------------------------------------


def _item():
    item = ClaimedListing("lst_1", "ten_1", MARKETPLACE, 3, "tok", "prd_1", "SKU-1", {})
    item.submission = {}
    return item


def test_the_rule_for_a_listing_with_earlier_writes():
    accepted = ListingResult("accepted", answer={"quantity": 52})
    rejected = ListingResult("rejected", error_code="8541", error_message="suppressed")
    waiting = ListingResult("submitted")
    down = ListingResult("unavailable", error_code="HTTP_503", retry_after=7)

    def status(own, earlier):
        return batches.combined(_item(), 0, own, earlier).status

    assert status(accepted, []) == "accepted"
    assert status(rejected, []) == "rejected"
    # an earlier write not processed yet: the listing waits, even when its own is confirmed
    assert status(accepted, [waiting]) == "processing"
    assert status(accepted, [rejected, down]) == "processing"
    assert batches.combined(_item(), 0, accepted, [down]).retry_after == 7
    # our patch does not show because the earlier feed landed over it: pushed again
    assert status(waiting, [accepted]) == "repush"
    item = _item()
    item.submission = {"kind": "feed", "unordered": True}  # ours may land later still
    assert batches.combined(item, 0, waiting, [accepted]).status == "processing"
    assert batches.combined(item, 0, accepted, [accepted]).status == "repush"
    # processed, and it landed: it may have overwritten the newer value
    assert status(accepted, [accepted]) == "repush"
    assert status(rejected, [rejected, accepted]) == "repush"
    # processed without landing (its message refused, the feed cancelled): ours decides
    assert status(accepted, [rejected]) == "accepted"
    assert status(rejected, [rejected]) == "rejected"


def test_which_writes_are_left_unresolved():
    feed = {"kind": "feed", "id": "F1", "message_id": 3, "unordered": True, "sent": {"sku": "A"}}
    patch = {"kind": "patch", "id": "P1", "sent": {"sku": "A"}}
    assert batches.unresolved_writes(None) == []
    assert batches.unresolved_writes(patch) == []  # applied in order with later patches
    assert batches.unresolved_writes(feed) == [feed]
    older = {**feed, "id": "F0"}
    assert batches.unresolved_writes({**patch, "superseded": [older]}) == [older]
    assert batches.unresolved_writes({**feed, "superseded": [older]}) == [older, feed]
    confirmed = {"kind": "confirmed", "answer": {}, "superseded": [older]}
    assert batches.unresolved_writes(confirmed) == [older]


@pytest.mark.parametrize("answer", ["accepted", "rejected"])
@pytest.mark.parametrize("feed_lands", [True, False])
def test_a_push_answered_at_once_waits_for_an_earlier_feed(app, tenant, fake, answer, feed_lands):
    """A push answered at once (nothing to send; refused) while a feed is unresolved:
    submitted, not in_sync or error, until the feed is processed; then pushed anew if the
    feed landed, else the push's own answer decides."""
    from commerce_api.db import write_transaction
    from commerce_api.marketplaces import listing_push
    from commerce_api.products.desired_state import mark_listings_pending

    (sku,) = _listed(tenant, fake, 1, prefix="CONF")
    connection = connect_amazon(tenant, fake)
    fake.hold_feeds()
    with write_transaction():
        mark_listings_pending(listing_ids=[row.id for row in Listing.select(Listing.id)])
    now = int(time.time() * 1000)
    (claimed,) = listing_push.claim(tenant.id, MARKETPLACE, 5, 60_000, "t1", now)
    # a feed of this listing that Amazon holds unprocessed
    outcome = batches.push_batch(connection, [claimed] * 6, slot_wait=None)
    feed = outcome.outcomes[0].submission
    assert feed["kind"] == "feed" and feed["unordered"] is True
    Listing.update(submission=feed).execute()
    if answer == "accepted":
        pushed = listing_push.PushOutcome(
            claimed, now, "accepted", {"external_id": "B0X", "quantity": 0}
        )
    else:
        pushed = listing_push.PushOutcome(claimed, now, "rejected", None, "8541", "Suppressed.")
    with write_transaction():
        batches.record([batches.BatchOutcome(connection, [pushed])], 0)
    listing = Listing.get()
    assert listing.sync_status == "submitted"
    assert listing.submission["kind"] == "confirmed"
    assert listing.submission["status"] == answer
    assert [w["id"] for w in listing.submission["superseded"]] == [feed["id"]]
    checks = batches.claim_checks(tenant.id, MARKETPLACE, 5, 60_000, "t2", now + 10_000)
    checked = batches.check_batch(connection, checks, slot_wait=None)
    with write_transaction():
        batches.record([checked], 0)
    assert Listing.get().sync_status == "submitted"  # the feed is not processed yet
    if not feed_lands:  # Amazon refuses the feed's message: nothing of it lands
        fake.invalid_skus[sku] = ("8541", "The SKU is suppressed.")
    fake.process_feeds()
    checks = batches.claim_checks(tenant.id, MARKETPLACE, 5, 60_000, "t3", now + 600_000)
    checked = batches.check_batch(connection, checks, slot_wait=None)
    with write_transaction():
        batches.record([checked], 0)
    listing = Listing.get()
    late = SyncAttempt.select().where(SyncAttempt.operation == "late_write").count()
    assert listing.submission is None
    if feed_lands:
        assert listing.sync_status == "pending" and late == 1  # pushed anew
    elif answer == "accepted":
        assert listing.sync_status == "in_sync" and late == 0
    else:
        assert listing.sync_status == "error" and late == 0
        assert listing.last_sync_error.startswith("8541:")
    assert_contract_kept(fake)


def test_a_push_answered_at_once_clears_a_resolved_submission(app, tenant, fake):
    """No unresolved write left: the push's answer lands and the old submission goes."""
    from commerce_api.db import write_transaction
    from commerce_api.marketplaces import listing_push
    from commerce_api.products.desired_state import mark_listings_pending

    _listed(tenant, fake, 1, prefix="DONE")
    connection = connect_amazon(tenant, fake)
    with write_transaction():
        mark_listings_pending(listing_ids=[row.id for row in Listing.select(Listing.id)])
    Listing.update(submission={"kind": "patch", "id": "P1", "sent": {"sku": "x"}}).execute()
    now = int(time.time() * 1000)
    (claimed,) = listing_push.claim(tenant.id, MARKETPLACE, 5, 60_000, "t1", now)
    pushed = listing_push.PushOutcome(claimed, now, "accepted", {"external_id": "B0X"})
    with write_transaction():
        batches.record([batches.BatchOutcome(connection, [pushed])], 0)
    listing = Listing.get()
    assert listing.sync_status == "in_sync" and listing.submission is None
