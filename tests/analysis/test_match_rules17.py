"""Unit rules of round 17 (issue 30), from heldout26's misses (other brands and words
here): the word that would single out a variant said in another sense (an amount of
something else, a difference, a count after an ordinal, a colour of another thing), and a
count spelled out before a word of the title."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product
from commerce_api.analysis.visibility_senses import colours_of_other_things, without_other_amounts
from commerce_api.analysis.visibility_sizes import sizes_of

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("Q-FRAME-45", "Quilting Hoop Frame, 45 cm Diameter"),
    Product("Q-FRAME-60", "Quilting Hoop Frame, 60 cm Diameter"),
    Product("Q-THREAD-PL", "Hand Quilting Thread, 2 Spools, Plum"),
    Product("Q-THREAD-SG", "Hand Quilting Thread, 2 Spools, Sage"),
    Product("Q-BOX-3", "Bobbin Storage Box, Three Trays"),
    Product("Q-BOX-5", "Bobbin Storage Box, Five Trays"),
]


def named(text, brand="Patchwell"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # an amount of something else, a difference, a count after an ordinal
        ("On the Patchwell quilting hoop frame, leave 60 cm of backing fabric spare.", set()),
        ("Hang the Patchwell quilting hoop frame 45 cm higher than your chair.", set()),
        (
            "I bought the Patchwell hand quilting thread; my last 2 spools lasted a year.",
            set(),
        ),
        ("I like the Patchwell quilting hoop frame with 60 cm of diameter.", {"Q-FRAME-60"}),
        ("The 45 cm Patchwell quilting hoop frame travels well.", {"Q-FRAME-45"}),
        # a colour that names or qualifies another thing
        (
            "Patchwell hand quilting thread, 2 spools, goes with a plum jam sandwich break.",
            set(),
        ),
        ("I sew with Patchwell hand quilting thread while sipping a sage tea.", set()),
        ("I quilt with the Patchwell hand quilting thread over a plum.", set()),
        ("Patchwell's hand quilting thread in the plum is lovely.", {"Q-THREAD-PL"}),
        ("Patchwell hand quilting thread: the sage one is softer.", {"Q-THREAD-SG"}),
        ("Patchwell hand quilting thread, in the sage, is bright enough.", {"Q-THREAD-SG"}),
        # a count spelled out before a word of the title
        ("The Patchwell five-tray bobbin storage box holds them all.", {"Q-BOX-5"}),
        ("Patchwell's bobbin storage box with three trays is enough.", {"Q-BOX-3"}),
        ("Patchwell sell the bobbin storage box in two sizes.", set()),
    ],
)
def test_round_17_rules(text, skus):
    assert named(text) == skus


def test_amounts_of_other_things_are_blanked_and_ours_kept():
    holding = {"quilt", "hoop", "frame", "diameter"}
    assert sizes_of(without_other_amounts("about 60 cm of loom waste", holding)) == {}
    assert sizes_of(without_other_amounts("50 mm lower than you think", holding)) == {}
    assert sizes_of(without_other_amounts("my first 2 reels", holding)) == {}
    assert sizes_of(without_other_amounts("60 cm of hoop frame", holding)) == {"cm": {"60"}}


def test_colours_of_other_things():
    holding = {"thread", "quilt", "spool"}
    assert colours_of_other_things("over a plum from the bakery", holding, set()) == {"plum"}
    assert colours_of_other_things("a plum hot toddy", holding, set()) == {"plum"}
    assert colours_of_other_things("the plum thread", holding, set()) == set()
    assert colours_of_other_things("the plum, then", holding, set()) == set()
    assert colours_of_other_things("a plum tea and the plum thread", holding, set()) == set()
