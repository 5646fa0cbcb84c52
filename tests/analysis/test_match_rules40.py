"""Unit rules of round 40 (issue 30), from heldout60's and heldout61's misses (other brands
and words here): a size after a comma and before a semicolon is no "difference" with the
comparative after it; an amount or a size after "the" or "my" that qualifies another thing
picks no variant ("with the 12 in ruler", "my size 7 bangles"); a variant's word of two words
("Storm Petrel") is a variant's word, and after "in" before another thing's name it is that
thing's colour; a size of ours said in the unit outweighs another product's lone word; a
modifier before a semicolon says the kind; the name before a comma is the whole."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("Q-RACK-40", "Cedar Drying Rack with Pegs, 40 cm"),
    Product("Q-KNOTS", "Reef Knot Practice Rope"),
    Product("Q-CORD-PL", "Waxed Whipping Cord 50 m, Kestrel"),
    Product("Q-CORD-AG", "Waxed Whipping Cord 50 m, Storm Petrel"),
    Product("Q-SPLICE-8", "Fid for Splicing, Size 8"),
    Product("Q-SPLICE-10", "Fid for Splicing, Size 10"),
    Product("Q-JUG-1", "Rinsing Jug 1 L"),
    Product("Q-JUG-2", "Rinsing Jug 2 L"),
    Product("Q-KIT", "Lighthouse in a Jug Kit"),
    Product("Q-GULL-60", "Copper Gull Finial 60 cm"),
    Product("Q-GULL-45", "Copper Gull Finial 45 cm"),
    Product("Q-THIMBLES", "Rope Thimbles, Bag of 40"),
]


def named(text, brand="Ropewhistle"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # another size after the comma, a comparative after the semicolon
        ("Get the Ropewhistle Cedar Drying Rack with Pegs, 60 cm; shorter racks sag.", set()),
        ("Get the Ropewhistle Cedar Drying Rack with Pegs, 40 cm; it folds flat.", {"Q-RACK-40"}),
        # an amount or a size that qualifies another thing
        ("Ropewhistle splicing fids are sturdy; I store them in my size 10 boots.", set()),
        (
            "The Ropewhistle fid for splicing in size 10 is the one for thick lines.",
            {"Q-SPLICE-10"},
        ),
        ("Ropewhistle rinsing jugs are fine; I measure with the 2 L saucepan.", set()),
        ("Ropewhistle's rinsing jug, the 2 L one, fills a bucket fast.", {"Q-JUG-2"}),
        # a variant's word of two words; a variant's word said of another thing after "in"
        ("Ropewhistle whipping cord in storm petrel vanishes on old manila.", {"Q-CORD-AG"}),
        ("I whip with Ropewhistle waxed cord and tie each coil in kestrel gift ribbon.", set()),
        ("Ropewhistle waxed whipping cord in kestrel looks smart on white lines.", {"Q-CORD-PL"}),
        # a size of ours said outweighs another product's lone word
        ("A small lighthouse fits neatly in the 2 L rinsing jug from Ropewhistle.", {"Q-JUG-2"}),
        # a modifier before a semicolon says the kind
        ("A tall mast wants the 60 cm Ropewhistle gull; the smaller one gets lost.", {"Q-GULL-60"}),
        # the name before the comma is the whole
        ("Ropewhistle's rope thimbles are thick and smooth.", {"Q-THIMBLES"}),
        ("Ropewhistle thimbles are thick and smooth.", set()),
    ],
)
def test_round_40(text, skus):
    assert named(text) == skus
