"""Unit rules of round 50 (issue 30), from heldout81's and heldout82's misses (other brands
and words here): a variant's words said whole pick it among its siblings, however many words
each variant has ("both <brand> crates, saffron and bottle green"), its siblings claim none of
its words, and the brand's plural kind with them names it ("<brand> cones in bottle green and
saffron"); a material before the kind ends a name when a variant is said ("<brand> linen in
saffron"), and so do two words of the title's lead; a part put between our title's head and
its last part is another product ("..., Large, Saffron"); the variants said by their last part
beside an exact title are named too; "24 Cavities" is a count, not the kind; the brand's shop
section, and the brand as an address's host, name nothing."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("H-CRATE-SA", "Slatted Apple Crate, Saffron"),
    Product("H-CRATE-BG", "Slatted Apple Crate, Bottle Green"),
    Product("H-LINEN-SA", "Twill Linen Roll 5 m, Saffron"),
    Product("H-LINEN-BG", "Twill Linen Roll 5 m, Bottle Green"),
    Product("H-TRAY", "Chocolate Bar Tray 12 Cavities"),
    Product("H-SCOOP", "Grain Scoops, Set of 2"),
]


def named(text, brand="Orrisbeck"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        (
            "Get both Orrisbeck crates, saffron and bottle green.",
            {"H-CRATE-SA", "H-CRATE-BG"},
        ),
        ("The bottle green Orrisbeck linen makes a neat border.", {"H-LINEN-BG"}),
        ("Use Orrisbeck linen in bottle green and in saffron.", {"H-LINEN-BG", "H-LINEN-SA"}),
        ("The Orrisbeck Slatted Apple Crate, Large, Saffron holds more.", set()),
        (
            "Orrisbeck Slatted Apple Crate: Saffron for me, Bottle Green for my sister.",
            {"H-CRATE-SA", "H-CRATE-BG"},
        ),
        ("I use the Orrisbeck bar tray so I can see the cavities fill.", {"H-TRAY"}),
        (
            "Browse Orrisbeck's tools section at https://orrisbeck.example/tools for grain "
            "scoops and crates.",
            set(),
        ),
    ],
)
def test_round_50(text, skus):
    assert named(text) == skus
