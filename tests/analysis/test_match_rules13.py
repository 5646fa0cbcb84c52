"""Unit rules of round 13 (issue 30), from heldout18's misses (other brands and words
here): the brand's name as a place's, a hyphenated word or a code of another number after
the brand, another product's words said generically beside the product the brand leads
into, the word before the kind ending at a preposition, the kind carrying a size, and a
second size said alone."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product
from commerce_api.analysis.visibility_others import renamed

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("T-ROPE-10", "Static Climbing Rope 10 m"),
    Product("T-ROPE-30", "Static Climbing Rope 30 m"),
    Product("T-SAW", "Three-Tooth Pruning Saw, Folding"),
    Product("T-LENS", "Tree Survey Loupe 6X, Lanyard"),
    Product("T-WAX-OC", "Bark Sealing Wax 100 g, Ochre"),
    Product("T-WAX-SL", "Bark Sealing Wax 100 g, Slate"),
    Product("T-SLING", "Throw Line Sling"),
    Product("T-BAG", "Throw Bag Cube 45 cm"),
]


def named(text, brand="Arborwell"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # the brand's name as a place, beside our kind words
        ("Arborwell Woods has old oaks; bring a static climbing rope and a pruning saw.", set()),
        ("The Arborwell Arena hosts climbers with throw line slings.", set()),
        ("At Arborwell Lodge they lend an Arborwell throw line sling.", {"T-SLING"}),
        ("At the Arborwell Cup every climber had a throw line sling.", set()),
        ("The Arborwell Regatta course passes a static climbing rope wall.", set()),
        # another number or prefix in a hyphenated word or a code after the brand
        ("The Arborwell Five-Tooth Pruning Saw, Folding cuts faster.", set()),
        ("The Arborwell Multi-Tooth Pruning Saw, Folding cuts faster.", set()),
        ("The Arborwell Tree Survey Loupe 10X, Lanyard is sharper.", set()),
        ("The Arborwell Tree Survey Loupe 6X is light.", {"T-LENS"}),
        ("The Arborwell Three-Tooth Pruning Saw cuts cleanly.", {"T-SAW"}),
        # another product's kind said with "a", beside a product the brand leads into
        ("The Arborwell Bark Sealing Wax seals cuts, so a pruning saw is safe.", set()),
        ("The Arborwell Throw Line Sling packs into a throw bag.", {"T-SLING"}),
        ("Arborwell sells a pruning saw that folds.", {"T-SAW"}),
        # the word before the kind, ended by a preposition; a colour before the brand
        ("Rub the slate Arborwell sealing over the cut.", {"T-WAX-SL"}),
        # the kind carries a size ("Throw Bag Cube 45 cm": the cube)
        ("The Arborwell cube in 45 cm holds the line.", {"T-BAG"}),
        # a second size said alone, after the first named in full
        (
            "Arborwell's static rope in 10 m suits a garden, the 30 m a big oak.",
            {"T-ROPE-10", "T-ROPE-30"},
        ),
        (
            "Arborwell's static rope in 10 m suits a garden; take the 30 m for a big oak.",
            {"T-ROPE-10", "T-ROPE-30"},
        ),
        (
            "Arborwell's static rope in 10 m suits a garden; the 30 m would need a bag.",
            {"T-ROPE-10"},
        ),
        ("Arborwell's static ropes come in 10 m and 30 m.", set()),
        # the brand as a style: another maker's product
        ("An Arborwell-style throw line sling is easy to sew.", set()),
        ("Arborwell-inspired pruning saws fold the same way.", set()),
        ("An Arborwell-made throw line sling lasts.", {"T-SLING"}),
        # a trade mark glued to a word of the title
        ("Arborwell's Throw Line™ Sling is bright.", {"T-SLING"}),
        ("The Arborwell Pruning Saw®, Folding cuts green wood.", {"T-SAW"}),
        # the brand's people, and the brand said not to make a product
        ("Arborwell's founder climbs with a throw line sling.", set()),
        ("Arborwell does not sell a three-tooth pruning saw.", set()),
        ("Arborwell doesn't make a throw line sling.", set()),
        ("Arborwell makes a throw line sling.", {"T-SLING"}),
        # a product the brand might make
        ("If Arborwell made a throw line sling in orange, I'd buy it.", set()),
        ("Arborwell will launch a three-tooth pruning saw next year.", set()),
        ("Arborwell's upcoming tree survey loupe is waterproof.", set()),
        ("Arborwell will ship the throw line sling today.", {"T-SLING"}),
        ("Arborwell's founder designed the Arborwell throw line sling.", {"T-SLING"}),
    ],
)
def test_round_13_rules(text, skus):
    assert named(text) == skus


def test_renamed_compares_codes_and_compounds_by_their_heads():
    import re

    brand = re.compile(r"(?i:Arborwell)((?:\s+(?:[a-z]*[A-Z0-9][\w.\-]*))+)")
    assert renamed("Arborwell 6S LiPo Pack", brand, "4S LiPo Pack")
    assert renamed("Arborwell Bi-Blade Props", brand, "Tri-Blade Props")
    assert not renamed("Arborwell 4S LiPo Pack", brand, "4S LiPo Pack")
    assert not renamed("Arborwell Roll-Top Bag", brand, "Dry Bag, Roll-Top")
    assert not renamed("Arborwell 6S LiPo Pack", brand, "LiPo Pack 1300 mAh")
