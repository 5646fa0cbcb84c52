"""Unit rules of round 18 (issue 30), from heldout19's misses (other brands and words
here): a link to a page of several products, "pick one" of a kind, a dimension without a
unit, and another word in place of the last part of our title."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("K-SCOPE-8", "Compact Monocular 8x25"),
    Product("K-SCOPE-10", "Compact Monocular 10x25"),
    Product("K-STRAP", "Padded Neck Strap, Adult"),
    Product("K-CLOTH", "Microfibre Lens Cloths, Pack of 3"),
    Product("K-POUCH", "Waxed Canvas Optics Pouch"),
]


def named(text, brand="Glassfen"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # a link to a collection, a category: a page of several
        ("See [their optics pouches](https://glassfen.example/collections/optics-pouch).", set()),
        (
            "Glassfen's [lens cloths](https://glassfen.example/c/microfibre-lens-cloths) are fine.",
            set(),
        ),
        # a product's page, also inside a collection
        (
            "I use [this one](https://glassfen.example/collections/bags/waxed-canvas-optics-pouch).",
            {"K-POUCH"},
        ),
        ("I use [this one](https://glassfen.example/p/waxed-canvas-optics-pouch).", {"K-POUCH"}),
        # "pick one" of the brand's kind is any of them; "the waxed one" picks
        ("Browse Glassfen optics pouches and pick one with a zip.", set()),
        ("Of the Glassfen optics pouches, the waxed canvas one is mine.", {"K-POUCH"}),
        # a dimension without a unit
        ("The Glassfen Compact Monocular 8x32 is brighter.", set()),
        ("The Glassfen Compact Monocular 8x25 is sharp.", {"K-SCOPE-8"}),
        ("The 10x Glassfen compact monocular shakes more.", {"K-SCOPE-10"}),
        # another word in place of the last part of our title
        ("The Glassfen Padded Neck Strap, Child fits small necks.", set()),
        ("The Glassfen Padded Neck Strap, Adult fits most necks.", {"K-STRAP"}),
    ],
)
def test_round_18_rules(text, skus):
    assert named(text) == skus
