"""Unit rules of round 45 (issue 30), from heldout72's false credit (other brands and words
here): the brand's plural kind names our plural title only when the title's name (before a
comma) follows the brand; its words said apart in the sentence do not ("<brand> pegs ... hold
the tents" of our "Tent Pegs, Bag of 20")."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("T-PEGS", "Tent Pegs, Bag of 20"),
    Product("T-MALLET", "Rubber Camp Mallet"),
]


def named(text, brand="Heathmoor"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("Heathmoor pegs bite into hard ground and hold the tents steady.", set()),
        ("Heathmoor's tent pegs bite into hard ground.", {"T-PEGS"}),
        ("Heathmoor pegs are sturdy.", set()),
    ],
)
def test_round_45(text, skus):
    assert named(text) == skus
