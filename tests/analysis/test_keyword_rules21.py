"""Round 21 of issue 30 (from heldout27's misses; other products here): keyword
suggestions, what buyers keep asking, hoping or wishing for is no claim about the
product."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


@pytest.mark.parametrize(
    "description, expected",
    [
        ("Customers keep asking for a foldable frame; we kept it rigid.", []),
        ("Rowers are hoping for a foldable rail next year.", []),
        ("Everyone is requesting a foldable version.", []),
        ("Buyers asked for it. It is foldable.", ["foldable"]),
    ],
)
def test_what_buyers_ask_for_is_no_claim(description, expected):
    assert terms("Slide Rower, Air Resistance", description) == expected
