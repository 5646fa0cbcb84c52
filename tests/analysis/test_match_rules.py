"""Unit rules of round 2 (issue 30): plural kinds, the brand's other products, colour
options, variant colours and sizes in mention detection; words cut out of phrases or said
of another part in keyword suggestions."""

import pytest

from commerce_api.analysis.listing_keywords import KeywordCorpus, standalone_words
from commerce_api.analysis.visibility_match import CatalogueMatcher, Product, sizes_of

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("BOWL-SAGE", "Stoneware Serving Bowl 24 cm, Sage"),
    Product("BOWL-CHAR", "Stoneware Serving Bowl 24 cm, Charcoal"),
    Product("JAR-S", "Soy Wax Jar Candle 200 g, Fig"),
    Product("JAR-L", "Soy Wax Jar Candle 500 g, Fig"),
    Product("GRIND", "Manual Burr Coffee Grinder with 30 Grind Settings"),
]


def named(text):
    matcher = CatalogueMatcher(SHOP, "Alder")
    _, found, _ = matcher.read(text)
    return {sku for unit in found for sku in unit}


def test_a_plural_kind_after_the_brand_names_no_product_unless_a_variant_word_says_which():
    assert named("Alder stoneware serving bowls are sturdy.") == set()
    assert named("Alder stoneware serving bowls in sage and charcoal.") == {
        "BOWL-SAGE",
        "BOWL-CHAR",
    }


def test_colour_options_of_one_product_and_a_colour_we_lack_name_no_variant():
    assert named("The Alder stoneware serving bowl comes in sage and charcoal.") == set()
    assert named("The Alder stoneware serving bowl in sage.") == {"BOWL-SAGE"}
    assert named("The Alder stoneware serving bowl in terracotta.") == set()


def test_a_size_singles_out_a_variant_and_another_size_rules_it_out():
    assert sizes_of("70 x 90 cm and 500 g") == {"cm": {"70x90"}, "g": {"500"}}
    assert named("The Alder soy wax jar candle 500 g in fig.") == {"JAR-L"}
    assert named("The Alder soy wax jar candle in fig, 300 g.") == set()


def test_the_brands_other_product_named_in_capitals_is_not_ours():
    assert named("Alder also sells an Electric Burr Coffee Grinder with 40 settings.") == set()
    assert named("Alder's manual burr coffee grinder is great.") == {"GRIND"}


def test_words_cut_out_of_a_phrase_or_said_of_another_part_do_not_stand_alone():
    alone = standalone_words(
        "Egg-crate foam, a stainless lid, 13-inch, on-ear, memory foam, padded.",
        {("memory", "foam")},
        {"bottle"},
    )
    assert {"foam", "stainles", "stainless", "inch", "ear"}.isdisjoint(alone)
    assert "padded" in alone


def test_no_suggestion_of_a_word_cut_out_of_a_category_phrase():
    corpus = KeywordCorpus(
        ("Pillows", title)
        for title in (
            "Memory Foam Pillow, Washable",
            "Memory Foam Pillow for Side Sleepers",
            "Memory Foam Travel Pillow",
            "Gel Pillow, Queen",
        )
    )
    terms = [
        k["term"]
        for k in corpus.suggest(
            "Pillows", "Gel Pillow, Queen", description="Gel-infused foam core; not memory foam."
        )
    ]
    assert terms == []
    terms = [
        k["term"]
        for k in corpus.suggest(
            "Pillows", "Gel Pillow, Queen", description="Shredded memory foam core."
        )
    ]
    assert terms == ["memory foam"]
