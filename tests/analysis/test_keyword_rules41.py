"""Round 41 of issue 30 (from heldout62's and heldout64's wrong suggestions; other products
here): a term true only with an add-on, said of earlier goods, of two parts set side by
side, or of another item the text names by its code says nothing of the product."""

import pytest

from tests.analysis.test_keyword_rules12 import terms
from tests.analysis.test_keyword_rules35 import WATCH_BOXES

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


@pytest.mark.parametrize(
    "description, expected",
    [
        ("Lockable only when fitted with the brass hasp kit.", []),
        ("Earlier boxes in this range were velvet lined; this one is bare oak.", []),
        ("For lockable ones see WB-12.", []),
        ("The tray is velvet lined; the lid is plain glass.", []),
        ("The key from WB-3 makes it lockable.", []),
        ("Both drawers are velvet lined.", ["velvet lined"]),
        ("Velvet lined, with a small lock for older children.", ["velvet lined"]),
    ],
)
def test_add_ons_earlier_goods_parts_and_other_items_say_nothing(description, expected):
    assert terms("Watch Box, Two Drawers, Mirror", description, WATCH_BOXES) == expected


@pytest.mark.parametrize(
    "description, expected",
    [
        # another product the text sends the buyer to (round 45)
        ("Plain pine floor: for velvet lined boxes see the travel range.", []),
    ],
)
def test_a_referral_after_for_says_nothing(description, expected):
    assert terms("Watch Box, Two Drawers, Mirror", description, WATCH_BOXES) == expected


@pytest.mark.parametrize(
    "description, expected",
    [
        # rivals' goods, a part that fits another model only (round 46)
        ("Rival boxes are velvet lined; this one is bare oak.", []),
        ("Velvet lined trays fit only the travel model.", []),
    ],
)
def test_rivals_and_parts_of_other_models_say_nothing(description, expected):
    assert terms("Watch Box, Two Drawers, Mirror", description, WATCH_BOXES) == expected
