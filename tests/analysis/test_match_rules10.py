"""Unit rules of round 10 (issue 30), from heldout11's and heldout12's misses (other brands
and words here): a size word names a size only beside our words, "<brand> <kind in the
plural>" of a title in the plural."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product
from commerce_api.analysis.visibility_words import size_words

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("R-VEST-M", "Padded Riding Vest, Size M"),
    Product("R-VEST-L", "Padded Riding Vest, Size L"),
    Product("R-PADS", "Slip-On Knee Pads, Pair"),
    Product("R-BATS", "Plastic Wheel Bats 25 cm, Pack of 4"),
]


def named(text, brand="Roskelly"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("He needs the Roskelly padded vest in size L; the medium rides up.", {"R-VEST-L"}),
        ("The medium Roskelly riding vest fits a slim rider.", {"R-VEST-M"}),
        ("Roskelly knee pads last a season.", set()),
        ("Roskelly slip-on knee pads go over shoes.", {"R-PADS"}),
        ("The 25 cm Roskelly wheel bats are plenty.", {"R-BATS"}),
    ],
)
def test_round_10_mention_rules(text, skus):
    assert named(text) == skus


def test_size_words_stand_beside_our_words():
    holding = {"m", "vest"}
    assert size_words(["the", "medium", "vest"], holding, {"roskelly"}) == {"m"}
    assert size_words(["the", "medium", "rides"], holding, {"roskelly"}) == set()
    assert size_words(["in", "medium"], holding, set()) == {"m"}
