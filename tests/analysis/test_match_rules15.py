"""Unit rules of round 15 (issue 30), from heldout21's misses (other brands and words
here): a SKU in a link's query, another product named in Title Case, a clause that says
the thing is another brand's, and the word before the kind used as a verb."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("V-SET", "Carving Gouge Set in Canvas Roll, 8 Gouges"),
    Product("V-MALLET", "Round Carving Mallet with Ash Handle"),
    Product("V-STROP", "Leather Strop Paddle with Compound"),
    Product("V-BAG", "Tool Carry Bag with Shoulder Strap"),
]


def named(text, brand="Chiselby"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # a SKU in a link's query; tracking parameters are not read
        ("Order it [here](https://chiselby.example/cart?sku=V-STROP&qty=1).", {"V-STROP"}),
        ("Add it: https://chiselby.example/basket?add=V-MALLET", {"V-MALLET"}),
        ("See https://chiselby.example/?utm_campaign=V-BAG for more.", set()),
        # another product of the brand named in Title Case with words our title lacks
        ("Chiselby also sell a Carving Gouge Set in Leather Roll for the same price.", set()),
        ("Chiselby sell a Carving Gouge Set in Canvas Roll, 8 Gouges I love.", {"V-SET"}),
        # a clause saying the thing is another brand's
        (
            "I read the Chiselby blog, but my round carving mallet with an ash handle"
            " is from Woodhew.",
            set(),
        ),
        (
            "The Chiselby round carving mallet with an ash handle is from their spring range.",
            {"V-MALLET"},
        ),
        # the word before the kind as a verb
        ("Chiselby's shoulder straps carry the weight well.", set()),
        ("The Chiselby tool carry bag with shoulder strap holds eight gouges.", {"V-BAG"}),
    ],
)
def test_round_15_rules(text, skus):
    assert named(text) == skus


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # round 16: the brand's plural kind said of any of them
        ("Chiselby's carving mallets, whatever the handle, are well balanced.", set()),
        ("Chiselby's round carving mallet with ash handle is well balanced.", {"V-MALLET"}),
    ],
)
def test_round_16_rules(text, skus):
    assert named(text) == skus
