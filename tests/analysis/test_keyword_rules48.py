"""Round 48 of issue 30 (from heldout77's and heldout78's misses; other products here): the
thing a product is compared with, and what it has, are not the product's ("Lighter than a
bulb planter with a release lever", "Works like a bulb planter"); a kit or a form of the
category's kind is no accessory of it ("Bulb Planter Kit"); the kind that ends the opening
noun phrase is said of the product ("A narrow widger with ..."); an aside is left out with its
clause only ("Depth scale on the blade; a release lever is sold separately"), and what a
thing the product fits has is that thing's, every part of it ("Fits planters with a depth
scale and a release lever")."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

PLANTERS = [
    ("Bulb planters", "Bulb Planter with Depth Scale"),
    ("Bulb planters", "Bulb Planter, Release Lever, Ash Handle"),
    ("Bulb planters", "Long Handled Bulb Planter, Depth Scale"),
    ("Bulb planters", "Bulb Planter, Depth Scale, Release Lever"),
    ("Bulb planters", "Ash Handle Bulb Planter"),
    ("Bulb planters", "Bulb Planter with Release Lever and Depth Scale"),
    ("Bulb planters", "Soil Corer with Ash Handle"),
    ("Bulb planters", "Bulb Planter Kit with Gloves"),
    ("Bulb planters", "Bulb Planter, Ash Handle"),
    ("Bulb planters", "Spare Coring Blade"),
]
WIDGERS = [
    ("Widgers", "Widger with Steel Tip"),
    ("Widgers", "Widger, Ash Handle, Steel Tip"),
    ("Widgers", "Steel Tip Widger"),
    ("Widgers", "Widger, Steel Tip, 12 cm"),
    ("Widgers", "Pocket Widger"),
    ("Widgers", "Widger, Steel Tip, Ash Handle"),
    ("Widgers", "Seedling Lifter 15 cm"),
]


@pytest.mark.parametrize(
    "title, description, expected",
    [
        ("Soil Corer with Ash Handle", "Lighter than a bulb planter with a release lever.", []),
        ("Soil Corer with Ash Handle", "Works like a bulb planter but cuts a wider core.", []),
        ("Bulb Planter Kit with Gloves", "It has a depth scale.", ["depth scale"]),
        (
            "Bulb Planter, Ash Handle",
            "Depth scale on the blade; a release lever is sold separately.",
            ["depth scale"],
        ),
        (
            "Spare Coring Blade",
            "Fits planters with a depth scale and a release lever; the handle is sold separately.",
            [],
        ),
    ],
)
def test_compared_kits_and_clauses(title, description, expected):
    assert sorted(terms(title, description, PLANTERS)) == expected


def test_the_kind_that_ends_the_opening_phrase_is_the_products():
    found = terms("Seedling Lifter 15 cm", "A narrow widger with a steel tip.", WIDGERS)
    assert sorted(found) == ["steel tip", "widger"]
