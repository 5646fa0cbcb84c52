"""Unit rules of round 48 (issue 30), from heldout77's and heldout78's misses (other brands
and words here): the number after a slash is no size of a list ("8/2, 100 m" is 100 m); an
amount on a card or a roll is the product's ("also comes on a 10 m card" is another size);
a title's lead of three words or more, in the plural, before a verb names it ("<brand>'s
youth shin guards stay put"); a variant said after "in" beside the variant the brand leads
into names it too ("the rails in <brand> walnut and the posts in ebony"); a brand that
British spelling folding rewrites ("Palliser") is ours in the possessive too."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("G-CORD", "Braided Nylon Cord 8/2, 200 m"),
    Product("G-PURL", "Silver Check Purl, 1 m"),
    Product("G-SOCK", "Youth Shin Guard Socks"),
    Product("G-STAIN-WA", "Fence Oil Stain 2 L, Walnut"),
    Product("G-STAIN-EB", "Fence Oil Stain 2 L, Ebony"),
    Product("G-BRUSH", "Stain Block Brush"),
]


def named(text, brand="Tolhurst"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("For a short job get the Tolhurst Braided Nylon Cord 8/2, 100 m.", set()),
        ("Tolhurst's silver check purl also comes on a 10 m card, better value.", set()),
        ("Tolhurst's youth shin guards stay put through a whole match.", {"G-SOCK"}),
        (
            "Stain the rails in Tolhurst walnut and the posts in ebony.",
            {"G-STAIN-WA", "G-STAIN-EB"},
        ),
    ],
)
def test_round_48(text, skus):
    assert named(text) == skus


def test_a_brand_spelt_with_ise_is_ours_in_the_possessive():
    # "Palliser" reads "pallizer" (British spellings folded): its possessive is not another
    # brand's clause
    assert named("Palliser's youth shin guards stay put.", "Palliser") == {"G-SOCK"}
