"""Round 52 of issue 30 (from heldout85's misses and wrong suggestion; other products here):
a product whose title names an accessory of the category's kind is one when its description
opens by saying so ("A complete bulb planter: blade, shaft and depth scale"); a part said to
stay on the buyer's own thing is that thing's ("the release lever stays on your planter")."""

import pytest

from tests.analysis.test_keyword_rules12 import terms
from tests.analysis.test_keyword_rules48 import PLANTERS

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

ROWS = [*PLANTERS, ("Bulb planters", "Planter Blade Head, Spare Shaft")]


@pytest.mark.parametrize(
    "title, description, expected",
    [
        (
            "Planter Blade Head, Spare Shaft",
            "A complete bulb planter: blade, shaft and depth scale.",
            ["depth scale"],
        ),
        ("Planter Blade Head, Spare Shaft", "Fits most planters; it has a depth scale.", []),
        (
            "Spare Coring Blade",
            "Fits any bulb planter; the release lever stays on your planter.",
            [],
        ),
    ],
)
def test_accessories_and_what_stays_on_yours(title, description, expected):
    assert sorted(terms(title, description, ROWS)) == expected
