"""Round 54 of issue 30 (from heldout89's misses; other products here): "left and right" is
either hand, no two parts set against each other ("A bulb planter for left and right
hands"); what comes before "rather than" is said of the product ("A bulb planter with a
depth scale rather than a release lever")."""

import pytest

from tests.analysis.test_keyword_rules12 import terms
from tests.analysis.test_keyword_rules48 import PLANTERS

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


@pytest.mark.parametrize(
    "description, expected",
    [
        ("It has a depth scale for left and right hands.", ["depth scale"]),
        ("A steel blade with a depth scale rather than a release lever.", ["depth scale"]),
        ("The left grip has a depth scale; the right one is bare.", []),
    ],
)
def test_hands_and_rather_than(description, expected):
    assert terms("Bulb Planter, Ash Handle", description, PLANTERS) == expected
