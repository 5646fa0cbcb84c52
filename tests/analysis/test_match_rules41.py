"""Unit rules of round 41 (issue 30), from heldout63's false credit (other brands and words
here): a name after our brand with our title's words up to its last "for" or "with", then
another word, is another product of the brand, even when that word is too short to be a
title word ("... for Ro" of our "... for Furo")."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("W-SCOOP", "Maple Flour Scoop for Rye"),
    Product("W-BRUSH", "Bench Brush with Horsehair"),
    Product("W-TIN", "Proving Tin 900 g"),
]


def named(text, brand="Crumbhollow"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("For spelt, use the Crumbhollow Maple Flour Scoop for Oat: it is deeper.", set()),
        ("For spelt, use the Crumbhollow Maple Flour Scoop for Ry: it is deeper.", set()),
        ("The Crumbhollow Bench Brush with PP is the one for sticky benches.", set()),
        ("The Crumbhollow Maple Flour Scoop for Rye is deep enough.", {"W-SCOOP"}),
        ("The Crumbhollow Bench Brush with Horsehair sweeps flour cleanly.", {"W-BRUSH"}),
        ("Crumbhollow's maple flour scoop for rye is deep enough.", {"W-SCOOP"}),
    ],
)
def test_round_41(text, skus):
    assert named(text) == skus
