"""Unit rules of round 11 (issue 30), from heldout13's and heldout14's misses (other brands
and words here): the brand said as the maker of a kind, a named product of the brand in
another material, sizes spelled out, the word before our kind with a size of ours."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product
from commerce_api.analysis.visibility_sizes import sizes_of

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("T-LANT", "Storm Lantern with Glass Globe"),
    Product("T-KETTLE", "Camp Kettle 1.2 L, Hard Anodised Aluminium"),
    Product("T-KITE-150", "Single-Line Box Kite 150 cm"),
    Product("T-KITE-200", "Single-Line Box Kite 200 cm"),
    Product("T-BOTTLE-05", "Insulated Water Bottle 0.5 L"),
    Product("T-BOTTLE-1", "Insulated Water Bottle 1 L"),
    Product("T-BREW", "Cold Brew Maker with Mesh Filter 1 L"),
]


def named(text, brand="Tallowby"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # the maker of a kind is the brand, not a product
        ("Tallowby is a lantern maker; they blow their own glass globes.", set()),
        ("Tallowby are box kite makers; their lines rarely tangle.", set()),
        ("The Tallowby storm lantern with the glass globe survives gales.", {"T-LANT"}),
        # ... unless "maker" is our own kind
        ("The one-litre Tallowby cold brew maker with the mesh filter.", {"T-BREW"}),
        # another material than ours in a named product of the brand
        ("The **Tallowby Camp Kettle 1.2 L, Stainless Steel** is tougher.", set()),
        ("The Tallowby camp kettle in hard anodised aluminium boils fast.", {"T-KETTLE"}),
        # sizes spelled out
        ("For lunch, the half-litre Tallowby insulated water bottle.", {"T-BOTTLE-05"}),
        ("On hikes, the one-litre Tallowby insulated water bottle.", {"T-BOTTLE-1"}),
        ("A two-litre Tallowby insulated water bottle would be nice.", set()),
        # the word before our kind and a size of ours
        ("For a child, the 150 cm Tallowby box is enough.", {"T-KITE-150"}),
        ("Adults want the 200 cm Tallowby box.", {"T-KITE-200"}),
        ("The Tallowby box is a classic.", set()),
    ],
)
def test_round_11_rules(text, skus):
    assert named(text) == skus


def test_spelled_sizes_are_amounts():
    assert sizes_of("a half-litre bottle") == sizes_of("a 0.5 L bottle") == {"ml": {"500"}}
    assert sizes_of("the one-litre jug") == sizes_of("the 1 L jug")
    assert sizes_of("one of the best") == {}
