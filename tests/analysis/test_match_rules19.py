"""Unit rules of round 19 (issue 30), from heldout23's misses (other brands and words
here): a title word said again after "without" speaks of the product again; a place the
named product goes into is not another product of ours; a shorter exact title written in
Title Case names its product."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("M-LADLE", "Pouring Ladle with Lip"),
    Product("M-CRUCIBLE", "Clay Graphite Crucible for Melting Pot"),
    Product("M-TONGS", "Crucible Lifting Tongs"),
    Product("M-MOULD", "Ingot Mould, Cast Iron"),
    Product("M-BOARD", "Lockable Casting Board"),
]


def named(text, brand="Meltwick"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # "without" before a word the unit said before it
        (
            "Meltwick's pouring ladle with lip pours cleanly without the ladle dripping.",
            {"M-LADLE"},
        ),
        ("The Meltwick pouring ladle without lip is the old one.", set()),
        # the place a named product goes into
        ("Meltwick's crucible lifting tongs reach into the melting pot crucible.", {"M-TONGS"}),
        (
            "Meltwick's lifting tongs grip the clay graphite crucible firmly.",
            {"M-CRUCIBLE", "M-TONGS"},
        ),
        # a shorter exact title in Title Case, with or without the brand
        ("The Lockable Casting Board we bought keeps the sand in.", {"M-BOARD"}),
        ("A lockable casting board keeps the sand in.", set()),
    ],
)
def test_round_19_rules(text, skus):
    assert named(text) == skus
