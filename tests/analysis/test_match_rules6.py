"""Unit rules of round 6 (issue 30), one test per kind of case heldout5 showed (its misses
were read; the cases here use other brands and words): another brand's product right
after a determiner or in the possessive, inside a unit that names ours; in keyword
suggestions, description sentences about an accessory, another model, a part or an add-on."""

import pytest

from commerce_api.analysis.listing_asides import without_asides
from commerce_api.analysis.listing_keywords import KeywordCorpus
from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("V-KNIFE", "Folding Pocket Knife with Oak Handle"),
    Product("V-SAW", "Folding Pruning Saw 20 cm"),
    Product("V-AXE", "Splitting Axe 70 cm"),
]


def named(text, brand="Vardholm"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    "text",
    [
        "Take the Vardholm splitting axe and a Greyfell folding pruning saw.",
        "Vardholm axes are good, but my Hollin folding pruning saw is what I reach for.",
        "Vardholm is a fine maker, yet Greyfell's folding pruning saw cuts faster.",
    ],
)
def test_another_brands_product_in_a_unit_naming_ours_is_not_ours(text):
    assert "V-SAW" not in named(text)


@pytest.mark.parametrize(
    ("text", "sku"),
    [
        ("Vardholm's folding pruning saw 20 cm fits a pocket.", "V-SAW"),
        ("A Vardholm folding pruning saw 20 cm is all you need.", "V-SAW"),
        ("Vardholm and Greyfell both make a splitting axe 70 cm; get the Vardholm.", "V-AXE"),
    ],
)
def test_our_brands_product_is_still_ours(text, sku):
    assert sku in named(text)


@pytest.mark.parametrize(
    "sentence",
    [
        "A waterproof cover is sold separately.",
        "A cordless base is available as an extra.",
        "For rain, choose our waterproof model.",
        "The liner is waterproof; the bag itself is not.",
        "The pan is uncoated, so a non-stick spray helps.",
    ],
)
def test_description_sentences_about_another_thing_are_left_out(sentence):
    assert without_asides(f"Made of canvas. {sentence}").strip() == "Made of canvas."


def test_a_reflexive_itself_keeps_the_sentence():
    text = "It has auto shut-off: it switches itself off at the boil."
    assert without_asides(text) == text


def test_an_accessorys_property_is_no_suggestion():
    corpus = KeywordCorpus(
        [
            ("Bags", "Waterproof Roll-Top Bag 20 L"),
            ("Bags", "Waterproof Roll-Top Bag 30 L"),
            ("Bags", "Waterproof Duffel Bag"),
            ("Bags", "Canvas Tote Bag"),
        ]
    )
    said = corpus.suggest(
        "Bags", "Canvas Tote Bag", description="A waterproof liner is sold separately."
    )
    assert not any("waterproof" in k["term"] for k in said)
    said = corpus.suggest("Bags", "Canvas Tote Bag", description="The tote is waterproof.")
    assert any("waterproof" in k["term"] for k in said)
