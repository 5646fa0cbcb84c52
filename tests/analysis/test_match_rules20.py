"""Unit rules of round 20 (issue 30), from heldout24's misses (other brands and words
here): a product the brand made once and no longer does, a size in feet, and amounts
listed before a counted word of the title."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("P-ROD-6", "Carbon Fly Rod for 6 ft Casts, Olive"),
    Product("P-ROD-9", "Carbon Fly Rod for 9 ft Casts, Olive"),
    Product("P-LINE-3", "Floating Fly Line, 3 Weight"),
    Product("P-LINE-5", "Floating Fly Line, 5 Weight"),
    Product("P-NET", "Rubber Mesh Landing Net"),
]


def named(text, brand="Brookvane"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # a product made once
        ("Brookvane used to sell a mesh landing net with a short handle.", set()),
        ("Brookvane's first landing net, the wooden one, was discontinued in 2019.", set()),
        ("Brookvane's old mesh landing net is no longer made.", set()),
        ("Brookvane once made a landing net in cotton mesh.", set()),
        ("Brookvane's rubber mesh landing net is the one I use now.", {"P-NET"}),
        # a size in feet
        ("The Brookvane Carbon Fly Rod for 12 ft Casts, Olive is a two-hander.", set()),
        ("The Brookvane carbon fly rod for 9 ft casts is my river rod.", {"P-ROD-9"}),
        # amounts listed before a counted word
        (
            "Brookvane's floating fly lines in 3 and 5 weight cover most trout water.",
            {"P-LINE-3", "P-LINE-5"},
        ),
    ],
)
def test_round_20_rules(text, skus):
    assert named(text) == skus


TELESCOPES = [
    Product("T-DOB", "Tabletop Dobsonian Reflector 130 mm"),
    Product("T-EP", "Orthoscopic Eyepiece 10 mm"),
]


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # round 22: a type's name after the brand in the plural is the brand's kind
        ("Skylark Dobsonians hold collimation well.", set()),
        ("The Skylark Dobsonian holds collimation well.", {"T-DOB"}),
    ],
)
def test_round_22_rules(text, skus):
    _, found, _ = CatalogueMatcher(TELESCOPES, "Skylark").read(text)
    assert {sku for unit in found for sku in unit} == skus


KITS = [
    Product("R-DIFF", "Front Differential Rebuild Kit"),
    Product("R-TYRES", "Pin-Spike Rally Tyres, Set of 4"),
]


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # round 23: the word before the kind after "to" is a verb
        ("Dashmoor differentials are easy to rebuild and grip well.", set()),
        ("Dashmoor's front differential rebuild kit is complete.", {"R-DIFF"}),
    ],
)
def test_round_23_rules(text, skus):
    _, found, _ = CatalogueMatcher(KITS, "Dashmoor").read(text)
    assert {sku for unit in found for sku in unit} == skus
