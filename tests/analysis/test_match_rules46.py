"""Unit rules of round 46 (issue 30), from heldout73's false credit (other brands and words
here): our title's first words in Title Case anywhere, then a comma and a capitalised word our
title lacks, are another product of the brand ("<brand> also sell the Felted Rod Pouch,
Zipped" is not our "Felted Rod Pouch with Drawstring")."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("K-APRON", "Waxed Canvas Apron with Leather Straps"),
    Product("K-GLOVE", "Suede Welding Gloves, Long Cuff"),
]


def named(text, brand="Forgewick"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("Forgewick also sell the Waxed Canvas Apron, Bib-Free, which suits hot days.", set()),
        (
            "Forgewick also sell the Waxed Canvas Apron with Leather Straps; I wear it daily.",
            {"K-APRON"},
        ),
    ],
)
def test_round_46(text, skus):
    assert named(text) == skus
