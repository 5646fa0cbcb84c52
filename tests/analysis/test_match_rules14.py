"""Unit rules of round 14 (issue 30), from heldout20's misses (other brands and words
here): a misspelt word of a title, a whole title named after the brand beside "any", an
exact title with a count, the first words of a title without its kind, and the brand's
plural kind described by a word of the title."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product
from commerce_api.analysis.visibility_spelling import Misspellings

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("R-HOOK-S", "Cast Brass Boat Hook, Short Pole"),
    Product("R-HOOK-L", "Cast Brass Boat Hook, Long Pole"),
    Product("R-FEND", "Inflatable Fender Set, 4 Fenders"),
    Product("R-LOG", "Passage Notebook, 120 Pages"),
    Product("R-KNOT", "Splicing Fid Set with Pusher, 3 Sizes"),
    Product("R-BLOCKS", "Ash Deck Blocks 30 mm, Pair"),
]


def named(text, brand="Harbourne"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # a misspelt word inside our title, as titles are written
        ("The Harbourne Inflatable Fendr Set, 4 Fenders hangs well.", {"R-FEND"}),
        ("I found the Harbourne Spilcing Fid Set with Pusher, 3 Sizes aboard.", {"R-KNOT"}),
        # ... not any word that looks like one of ours, nor a competitor's misspelling
        ("A Harbourne boat hook lets you reach the buoy.", set()),
        ("The Tidecraft Inflatable Fendr Set is cheaper.", set()),
        # a whole title named after the brand, beside "any" said of the kind
        ("The Harbourne Ash Deck Blocks 30 mm, Pair run better than any blocks.", {"R-BLOCKS"}),
        ("Any deck blocks from Harbourne will do.", set()),
        # an exact title with a count, without the brand
        ("I keep a Passage Notebook, 120 Pages at the chart table.", {"R-LOG"}),
        ("A passage notebook with 200 pages is thick.", set()),
        # the first words of a title after the brand, without its kind
        ("- **Splicing:** Harbourne splicing fid set with pusher, three sizes", {"R-KNOT"}),
        # the brand's plural kind described by a word of the title
        ("Harbourne blocks have ash cheeks, so they look classic.", set()),
        ("Harbourne's ash deck blocks in 30 mm run freely.", {"R-BLOCKS"}),
    ],
)
def test_round_14_rules(text, skus):
    assert named(text) == skus


def test_misspellings_need_one_edit_and_a_neighbour_of_the_title():
    holding = {"fender": {"A"}, "inflatable": {"A"}, "tent": {"B"}, "shelter": {"B"}}
    orders = {"A": ["inflatable", "fender"], "B": ["shelter", "tent"]}
    spelling = Misspellings(holding.keys(), orders)
    text = "The Inflatable Fendr and the Shelter Tnet"
    keys = ["the", "inflatable", "fendr", "and", "the", "shelter", "tnet"]
    assert spelling.fix(keys, holding, text) == {2: "fender", 6: "tent"}
    # no neighbour of the title, or lower case: left as it is
    assert spelling.fix(["the", "big", "fendr"], holding, "The big Fendr") == {}
    assert spelling.fix(["inflatable", "fendr"], holding, "Inflatable fendr") == {}
    # a word on the other side of the title's neighbour is no misspelling of it (round 25)
    assert spelling.fix(["the", "tant", "shelter"], holding, "The Tant Shelter") == {}
