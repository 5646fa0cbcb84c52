"""Unit rules of round 43 (issue 30), from heldout68's false credit (other brands and words
here): our brand followed by our title's first words, a comma and a capitalised word our
title lacks names another product of the brand ("<brand> Threaded Pommel, Featherweight" is
not our "Threaded Pommel with Spanner")."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("F-GUARD", "Padded Chest Guard with Straps"),
    Product("F-MASK", "Mesh Fencing Mask, Size M"),
]


def named(text, brand="Lunghollow"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("The Lunghollow Padded Chest Guard, Junior suits smaller fencers.", set()),
        ("The Lunghollow Padded Chest Guard with Straps suits most fencers.", {"F-GUARD"}),
        ("Lunghollow's padded chest guard, with its straps, stays put.", {"F-GUARD"}),
    ],
)
def test_round_43(text, skus):
    assert named(text) == skus
