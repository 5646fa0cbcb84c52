"""Unit rule of round 53 (issue 30), from heldout87's false credit (other brands and words
here): the brand, the word before our kind and the kind in the plural speak of the brand's
products of that kind, our title singular too ("<brand> casting sands are well graded" of
our "Coarse Grit Casting Sand 10 kg", "sand" a colour too), unless more of our title's words
are said."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("M-SAND", "Coarse Grit Casting Sand 10 kg"),
    Product("M-SIEVE", "Garden Riddle Sieve 40 cm"),
]


def named(text, brand="Fenwicke"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("Fenwicke casting sands are well graded and hold a sharp edge.", set()),
        ("Fenwicke's coarse grit casting sand holds a sharp edge.", {"M-SAND"}),
    ],
)
def test_round_53(text, skus):
    assert named(text) == skus
