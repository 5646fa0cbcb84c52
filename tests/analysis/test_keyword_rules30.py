"""Rounds 30 to 32 of issue 30 (from heldout39's, heldout41's and heldout42's wrong
suggestions; other products here): an extra sold on its own, or made to fit the product, is
not the product; a line of what shoppers search for, or of tags, says nothing of it; nor a
thing to use instead, nor a finish that imitates a material (round 32), nor a maker's other
goods, a part left out, something else "that also" does, the packaging (round 34)."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

UKULELES = [
    ("Ukuleles", "Soprano Ukulele with Gig Bag"),
    ("Ukuleles", "Concert Ukulele, Mahogany, Gig Bag"),
    ("Ukuleles", "Tenor Ukulele with Gig Bag, Spruce"),
    ("Ukuleles", "Soprano Ukulele, Gig Bag, Clip Tuner"),
    ("Ukuleles", "Baritone Ukulele with Gig Bag"),
    ("Ukuleles", "Concert Ukulele, Spruce Top"),
    ("Ukuleles", "Tenor Ukulele, Solid Top"),
    ("Ukuleles", "Soprano Ukulele, Laminate"),
]


@pytest.mark.parametrize(
    "description, expected",
    [
        ("It comes with a padded gig bag.", ["gig bag"]),
        ("Comes bare; a gig bag to fit it is sold on its own.", []),
        ("A padded gig bag is sold on its own.", []),
        ("Comes bare; we make a gig bag to fit it.", []),
    ],
)
def test_an_extra_sold_on_its_own_is_not_the_product(description, expected):
    assert terms("Concert Ukulele, Spruce Top", description, UKULELES) == expected


@pytest.mark.parametrize(
    "description, expected",
    [
        ("Laminate top.\nCustomers also search for: gig bag, strap, tuner.", []),
        ("Laminate top.\nTags: gig bag, travel, beginner", []),
        ("Laminate top.\nRelated searches: gig bag", []),
        ("Laminate top. Search tags: gig bag, travel ukulele", []),
        ("Laminate top, and a padded gig bag: it zips shut.", ["gig bag"]),
    ],
)
def test_what_shoppers_search_for_is_not_said_of_the_product(description, expected):
    assert terms("Concert Ukulele, Spruce Top", description, UKULELES) == expected


STANDS = [
    ("Plant stands", "Cast Iron Plant Stand, Three Tiers"),
    ("Plant stands", "Plant Stand in Cast Iron, Round"),
    ("Plant stands", "Corner Plant Stand, Cast Iron, Black"),
    ("Plant stands", "Bamboo Plant Stand, Folding"),
    ("Plant stands", "Cast Iron Plant Stand with Castors"),
    ("Plant stands", "Plant Stand, Resin, Stone Grey"),
    ("Plant stands", "Ladder Plant Stand, Pine"),
]


@pytest.mark.parametrize(
    "description, expected",
    [
        ("Solid cast iron legs and a slatted top.", ["cast iron"]),
        ("Moulded resin with a cast iron effect finish.", []),
        ("Light resin; for heavy pots use a cast iron stand instead.", []),
        ("Resin rather than cast iron, so it never rusts.", []),
    ],
)
def test_a_thing_to_use_instead_or_an_imitation_is_not_the_product(description, expected):
    assert terms("Plant Stand, Resin, Stone Grey", description, STANDS) == expected


@pytest.mark.parametrize(
    "description, expected",
    [
        ("From the makers of Gig Bag Pro cases; a laminate top.", []),
        ("A laminate top. A gig bag was left out to keep the price down.", []),
        ("Spruce from a mill that also cuts gig bag frames.", []),
        ("Packed in a gig bag sleeve of printed card.", []),
        ("It comes with a padded gig bag.", ["gig bag"]),
    ],
)
def test_a_makers_goods_a_part_left_out_or_the_packaging_are_not_the_product(description, expected):
    assert terms("Concert Ukulele, Spruce Top", description, UKULELES) == expected
