"""Unit rules of round 55 (issue 30), from heldout93's misses (other brands and words here):
a capitalised part put in place of our middle part before a count is another product
("<brand> Dried Moss Clumps, Early Spring, 50 Pieces" of our "..., Late Autumn, 50 Pieces");
the word before our kind in the plural and a comma, with a variant of ours said, ends a name
("both <brand> tinting pastes, the smalt for skies and the umber for soil")."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("P-MOSS", "Dried Moss Clumps, Late Autumn, 50 Pieces"),
    Product("P-PASTE-SM", "Tinting Paste Tube 20 ml, Smalt"),
    Product("P-PASTE-UM", "Tinting Paste Tube 20 ml, Burnt Umber"),
]


def named(text, brand="Quernby"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("For spring, the Quernby Dried Moss Clumps, Early Spring, 50 Pieces are greener.", set()),
        (
            "Use both Quernby tinting pastes, the smalt for skies and the burnt umber for soil.",
            {"P-PASTE-SM", "P-PASTE-UM"},
        ),
    ],
)
def test_round_55(text, skus):
    assert named(text) == skus
