"""Unit rules of round 12 (issue 30), from heldout15's misses (other brands and words
here): the brand's name as a person's, colours a product comes in with "both", colour words
beyond the common ones."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product
from commerce_api.analysis.visibility_others import without_people
from commerce_api.analysis.visibility_sizes import spelled_out

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("V-VASE-AM", "Ribbed Stoneware Vase 20 cm, Amber"),
    Product("V-VASE-SI", "Ribbed Stoneware Vase 20 cm, Sienna"),
    Product("V-APRON", "Split-Leg Pottery Apron"),
    Product("V-MAT", "Cork Pottery Wheel Mat"),
]


def named(text, brand="Velmoray"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("My old teacher, Martha Velmoray, wore a split-leg apron at the wheel.", set()),
        ("The potter Ada Velmoray keeps a cork wheel mat by the wheel.", set()),
        ("Velmoray's split-leg apron keeps clay off your knees.", {"V-APRON"}),
        ("I bought the Velmoray cork wheel mat.", {"V-MAT"}),
        # an exact full title is still its product, whoever is named
        ("My teacher, Martha Velmoray, wore a Split-Leg Pottery Apron.", {"V-APRON"}),
        ("Velmoray's ribbed vase comes in amber and sienna.", set()),
        (
            "Velmoray's ribbed vase comes in amber and sienna; I have both.",
            {"V-VASE-AM", "V-VASE-SI"},
        ),
        ("The sienna Velmoray ribbed vase looks warm.", {"V-VASE-SI"}),
        ("The Velmoray ribbed vase in crimson would be lovely.", set()),
    ],
)
def test_round_12_rules(text, skus):
    assert named(text) == skus


def test_a_person_of_the_brands_name_is_cut_out_and_a_sentence_start_is_not():
    assert "Velmoray" not in without_people("the potter Ada Velmoray said", ("velmoray",))
    assert without_people("The Velmoray mat.", ("velmoray",)) == "The Velmoray mat."
    assert without_people("I love Velmoray mats.", ("velmoray",)) == "I love Velmoray mats."


FERN = [
    Product("F-HOOK", "Folding Boot Hooks, Pair"),
    Product("F-KIT", "Leather Care Kit for Oil and Wax"),
    Product("F-LACE-120", "Round Waxed Laces 120 cm"),
    Product("F-LACE-150", "Round Waxed Laces 150 cm"),
    Product("F-BRUSH-1", "Horsehair Welt Brush, Size 1"),
    Product("F-BRUSH-3", "Horsehair Welt Brush, Size 3"),
]


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # heldout17: the brand as the shop another brand's product came from
        ("I bought Mallowby folding boot hooks at the Tarnhollow shop.", set()),
        ("I bought the Tarnhollow folding boot hooks last winter.", {"F-HOOK"}),
        # a name of the brand's that goes on past a lower-case word ("pH")
        ("Tarnhollow's Leather Care Kit for pH and Suede is gentler.", set()),
        ("Tarnhollow's Leather Care Kit for Oil and Wax covers most boots.", {"F-KIT"}),
        # numbers in words
        (
            "The Tarnhollow round waxed laces, a hundred and twenty centimetres long.",
            {"F-LACE-120"},
        ),
        ("Tarnhollow round waxed laces in one hundred and fifty centimetres.", {"F-LACE-150"}),
        ("The Tarnhollow Horsehair Welt Brush, Size Three, reaches the welt.", {"F-BRUSH-3"}),
        ("Tarnhollow round waxed laces in ninety centimetres would suit shoes.", set()),
    ],
)
def test_round_12_rules_from_heldout17(text, skus):
    _, found, _ = CatalogueMatcher(FERN, "Tarnhollow").read(text)
    assert {sku for unit in found for sku in unit} == skus


def test_numbers_in_words_are_digits_before_a_unit_or_after_size():
    assert spelled_out("a hundred and sixty centimetres") == "160 centimetres"
    assert spelled_out("twenty-five mm and Size Two") == "25 mm and Size 2"
    assert spelled_out("one of the best, a litre") == "one of the best, a litre"


HACKLE = [
    Product("H-THR-CB", "Tying Thread 8/0, Cobalt"),
    Product("H-THR-OC", "Tying Thread 8/0, Ochre"),
    Product("H-CAPE", "Grizzly Dry Fly Hackle Cape, Grade 2"),
    Product("H-RATE", "Stroke Rate Meter with Impeller"),
    Product("H-DIAG", "Modular Kusudama Diagrams, Volume 2"),
]


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # heldout16: our title's words said of another brand after a contrast
        (
            "I buy thread from Hacklemoor, but for the cape go to Visecraft: their grizzly dry"
            " fly hackle, grade 2, is better.",
            set(),
        ),
        (
            "Hacklemoor's thread is great, but the rate meter I use is Strokemark's impeller"
            " model; it reads well.",
            set(),
        ),
        (
            "I like Hacklemoor's thread, but the modular kusudama diagrams I recommend are"
            " Papyrine's, volume 2.",
            set(),
        ),
        ("Hacklemoor's stroke rate meter with impeller reads well.", {"H-RATE"}),
        # "8/0" is one size: another one is another product, the same names no colour
        ("Use the Hacklemoor Tying Thread 6/0, Cobalt, for streamers.", set()),
        ("The Hacklemoor Tying Thread 8/0 lies close on the shank.", set()),
        ("The Hacklemoor Tying Thread 8/0 in cobalt lies close on the shank.", {"H-THR-CB"}),
    ],
)
def test_round_12_rules_from_heldout16(text, skus):
    _, found, _ = CatalogueMatcher(HACKLE, "Hacklemoor").read(text)
    assert {sku for unit in found for sku in unit} == skus
