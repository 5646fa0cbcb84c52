"""Unit rules of round 47 (issue 30), from heldout76's false credit (other brands and words
here): the word of a product's kind, said once as a word of another product's name of another
kind, does not name it with its other words ("the bean drying rack ... saving dwarf french
seed" is not our "Heirloom Dwarf French Beans"); a variant of the same kind keeps it."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("T-RACK-GR", "Bean Drying Rack 60 cm, Green"),
    Product("T-RACK-RD", "Bean Drying Rack 60 cm, Red"),
    Product("T-SEED", "Heirloom Dwarf French Beans, 50 g"),
    Product("T-SACK", "Hessian Planting Sack, Pack of 5"),
]


def named(text, brand="Tuberfield"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        (
            "Tuberfield sells the bean drying rack in green and in red; either suits saving "
            "dwarf french seed.",
            {"T-RACK-GR", "T-RACK-RD"},
        ),
        (
            "Tuberfield's dwarf french beans dry well on the bean drying rack in green.",
            {"T-SEED", "T-RACK-GR"},
        ),
    ],
)
def test_round_47(text, skus):
    assert named(text) == skus
