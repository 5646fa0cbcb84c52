"""Round 40 of issue 30 (from heldout61's wrong suggestions; other products here): a
sentence that defines a term, the likeness a product is shaped like and another product
shown beside it say nothing of the product; a colon ends a clause."""

import pytest

from tests.analysis.test_keyword_rules12 import terms
from tests.analysis.test_keyword_rules35 import WATCH_BOXES

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


@pytest.mark.parametrize(
    "description, expected",
    [
        ("Velvet lined means a soft pile on every floor; these drawers are bare beech.", []),
        ("Shaped like a lockable watch box but open, for a dresser top.", []),
        ("The velvet lined tray shown beside it is another product.", []),
        ("A lockable case shaped like a small chest, with a brass hasp.", ["lockable"]),
        ("Lockable: turn the key to shut it, not a latch instead.", ["lockable"]),
        ("The drawers are velvet lined, which means nothing scratches.", ["velvet lined"]),
    ],
)
def test_definitions_likenesses_and_other_products_say_nothing(description, expected):
    assert terms("Watch Box, Two Drawers, Mirror", description, WATCH_BOXES) == expected
