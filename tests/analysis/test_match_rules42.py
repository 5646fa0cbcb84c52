"""Unit rules of round 42 (issue 30), from heldout66's misses (other brands and words here):
a variant's word after "in" stays the product's when what follows is a function word ("in
vermeil so you have both"), not another thing's name."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("V-CAP-HB", "Swim Cap, Hornbeam"),
    Product("V-CAP-SF", "Swim Cap, Saffron Mist"),
    Product("V-CLIP", "Nose Clip with Cord"),
]


def named(text, brand="Dunmoray"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        (
            "Get the Dunmoray swim cap in saffron mist and in hornbeam so you can swap.",
            {"V-CAP-HB", "V-CAP-SF"},
        ),
        ("Dunmoray swim cap in hornbeam so everyone spots you.", {"V-CAP-HB"}),
        ("I wear the Dunmoray swim cap and pack it in hornbeam gift tissue.", set()),
    ],
)
def test_round_42(text, skus):
    assert named(text) == skus
