"""Round 35 of issue 30 (from heldout48's and heldout49's wrong suggestions; other products
here): a claim that is hedged or unchecked says nothing of the product ("looks like", "we
believe", "may", "not checked"), nor another product to pair it with, nor a claim of one
part set against another ("the upper shelf ...; the lower one ...")."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

WATCH_BOXES = [
    ("Watch boxes", "Watch Box, Velvet Lined, Six Slots"),
    ("Watch boxes", "Lockable Watch Box, Velvet Lined"),
    ("Watch boxes", "Watch Box with Glass Lid, Lockable"),
    ("Watch boxes", "Velvet Lined Watch Box, Walnut"),
    ("Watch boxes", "Travel Watch Box, Velvet Lined, Zipped"),
    ("Watch boxes", "Lockable Watch Box, Twelve Slots"),
    ("Watch boxes", "Watch Box, Carbon Fibre, Lockable"),
    ("Watch boxes", "Watch Roll, Leather"),
    ("Watch boxes", "Watch Box, Two Drawers, Mirror"),
]


@pytest.mark.parametrize(
    "description, expected",
    [
        ("The drawers are velvet lined to keep straps from marking.", ["velvet lined"]),
        ("It looks like the drawers are velvet lined, but it is only printed felt.", []),
        ("We believe the drawers are velvet lined, but the maker has not confirmed it.", []),
        ("The drawers may be velvet lined on later batches; we have not checked.", []),
        ("Pair it with a lockable watch box such as our walnut one.", []),
        ("The upper drawer is velvet lined; the lower one is bare beech.", []),
    ],
)
def test_a_hedged_or_partial_claim_is_not_the_product(description, expected):
    assert terms("Watch Box, Two Drawers, Mirror", description, WATCH_BOXES) == expected


@pytest.mark.parametrize(
    "description, expected",
    [
        # what the buyer may do to it, what it is too big or small for (round 37)
        ("You can make it lockable yourself with a small hasp.", []),
        ("Too shallow to be velvet lined, so the floor is bare card.", []),
        ("The drawers are velvet lined in grey.", ["velvet lined"]),
    ],
)
def test_what_the_buyer_may_do_or_what_it_is_too_small_for(description, expected):
    assert terms("Watch Box, Two Drawers, Mirror", description, WATCH_BOXES) == expected
