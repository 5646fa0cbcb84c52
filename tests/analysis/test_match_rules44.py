"""Unit rules of round 44 (issue 30), from heldout70's false credits (other brands and words
here): the brand's earlier model ("<brand>'s first easel", "the old <brand> easel") is not our
product; the buyer's first one of ours is."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("E-EASEL", "Field Easel with Tilt Lock"),
    Product("E-BOX", "Pochade Box, 8 x 10 in"),
]


def named(text, brand="Moorvane"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("Moorvane's first field easel, made before the tilt lock, wobbled in wind.", set()),
        ("The old Moorvane field easel had no tilt lock and slipped.", set()),
        ("Moorvane's earlier field easel used wing nuts.", set()),
        ("My first Moorvane field easel with tilt lock is still going.", {"E-EASEL"}),
        ("The Moorvane field easel with tilt lock holds steady in wind.", {"E-EASEL"}),
    ],
)
def test_round_44(text, skus):
    assert named(text) == skus
