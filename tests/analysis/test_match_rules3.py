"""Unit rules of round 3 (issue 30), one test per kind of case heldout2 showed: sizes said
another way, a number a title word carries, compound kinds, another brand's clause or exact
title, four-word exact titles, codes; in keyword suggestions, what a description says of a
thing the product works with, and a phrase that extends the title's own."""

import pytest

from commerce_api.analysis.listing_keywords import KeywordCorpus
from commerce_api.analysis.visibility_match import CatalogueMatcher, Product, sizes_of

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("X-BANK-10", "10,000 mAh Magnetic Power Bank"),
    Product("X-PACK-45", "Ridgeway 45L Hiking Backpack with Rain Cover"),
    Product("X-SPF-50", "Mineral Sunscreen SPF 50, Tinted"),
    Product("X-BOARD", "End-Grain Walnut Cutting Board 40 x 30 cm"),
    Product("X-PAN-24", "Carbon Steel Frying Pan 24 cm"),
    Product("X-PAN-28", "Carbon Steel Frying Pan 28 cm"),
    Product("X-LEASH", "Reflective Rope Leash 1.8 m"),
    Product("X-LOUNGE", "Cardboard Cat Scratcher Lounge"),
    Product("X-KNIFE", "Chef's Knife 20 cm, German Steel"),
    Product("X-NOTE-A5", "Linen Notebook A5, Dot Grid"),
    Product("X-NOTE-A4", "Linen Notebook A4, Dot Grid"),
]


def named(text, brand="Voltra"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


def test_sizes_with_more_units_by_thousands_and_a_words_number():
    assert sizes_of("40 by 30 cm") == {"cm": {"40x30"}}
    assert sizes_of("a 45-litre pack") == {"ml": {"45000"}}  # volumes in millilitres (round 9)
    assert sizes_of("10,000 mAh") == sizes_of("10000mAh") == {"mah": {"10000"}}
    assert sizes_of("65W charger") == {"w": {"65"}}
    assert sizes_of("Sunscreen SPF 50") == sizes_of("sunscreen SPF50") == {"#spf": {"50"}}


@pytest.mark.parametrize(
    "text",
    [
        "Voltra's 20,000 mAh Magnetic Power Bank is heavy.",
        "Voltra's Mineral Sunscreen SPF 30, Untinted is lighter.",
        "Voltra also sells a Carbon Steel Frying Pan 32 cm.",
    ],
)
def test_the_brands_product_of_another_number_is_not_ours(text):
    assert named(text) == set()


def test_a_size_said_another_way_is_ours():
    assert named("The Voltra 10000mAh magnetic power bank snaps on.") == {"X-BANK-10"}
    assert named("The Voltra end-grain walnut board, the 40 by 30 cm one.") == {"X-BOARD"}


def test_the_last_part_of_a_compound_kind_says_it():
    assert named("Voltra's 45-litre Ridgeway hiking pack has a rain cover.") == {"X-PACK-45"}


def test_another_brands_clause_does_not_lend_its_words_to_ours():
    assert named("Voltra leashes are fine, and Ruffwear's Knot-a-Leash is reflective.") == set()
    assert named("Voltra's reflective rope leash is fine, and Ruffwear's is dearer.") == {"X-LEASH"}


def test_several_sizes_said_one_by_one_name_each_but_sizes_it_comes_in_name_none():
    assert named("Voltra carbon steel frying pans: the 24 cm for eggs, the 28 cm for steak.") == {
        "X-PAN-24",
        "X-PAN-28",
    }
    assert named("The Voltra carbon steel frying pan comes in 24 or 28 cm.") == set()


def test_an_exact_title_of_four_significant_words_names_it_without_the_brand():
    assert named("i wouldn't get the cardboard cat scratcher lounge again") == {"X-LOUNGE"}
    assert named("Top pick: Cardboard Cat Scratcher Lounge.") == {"X-LOUNGE"}
    assert named("The Chefs Knife 20cm German Steel holds an edge.") == {"X-KNIFE"}


@pytest.mark.parametrize(
    "text",
    [
        "The Anker MagGo 10,000 mAh Magnetic Power Bank is the usual pick.",
        "1. Anker 10,000 mAh Magnetic Power Bank - compact",
        "OXO's Cardboard Cat Scratcher Lounge is cheaper.",
        "The Cardboard Cat Scratcher Lounge by Catit is cheaper.",
    ],
)
def test_our_exact_title_said_as_another_brands_product_is_not_ours(text):
    assert named(text) == set()


def test_a_code_of_a_letter_and_a_digit_tells_variants_apart():
    assert named("The Voltra linen notebook A5 has lovely paper.") == {"X-NOTE-A5"}
    # a kind's title ("Linen Notebook A5, Dot Grid": three words of three letters) is no
    # product's name without the brand
    assert named("The Leuchtturm linen notebook A5, dot grid.") == set()


def suggest(title, description, titles):
    corpus = KeywordCorpus(("Lights", t) for t in titles)
    return [k["term"] for k in corpus.suggest("Lights", title, description=description)]


TITLES = (
    "USB Rechargeable LED Desk Lamp",
    "LED Desk Lamp, Dimmable",
    "LED Desk Lamp, Dimmable, USB Rechargeable",
    "Dimmable LED Desk Lamp with Clamp",
    "Desk Lamp, Touch Control",
    "Banker's Lamp, Brass",
)


def test_what_a_description_says_of_a_thing_the_product_works_with_is_not_suggested():
    description = "Brass banker's lamp. Works with dimmable LED bulbs; takes an E27 bulb."
    assert suggest("Banker's Lamp, Brass", description, TITLES) == []


def test_a_phrase_before_the_titles_own_noun_phrase_is_suggested_whole():
    assert "led desk lamp" in suggest(
        "Desk Lamp, Touch Control", "An LED desk lamp with a touch panel.", TITLES
    )
    # not a phrase that runs into the middle of the title's noun phrase
    assert (
        suggest(
            "Frying Pan 20 cm", "A non-stick frying pan.", ("Non-Stick Frying Pan", "Frying Pan")
        )
        == []
    )


def test_the_new_words_alone_win_over_an_extension_of_the_titles_phrase():
    titles = (
        "Insulated Stainless Steel Water Bottle",
        "Insulated Stainless Steel Bottle, Wide Mouth",
        "Insulated Water Bottle 1 L",
        "Kids' Water Bottle, Stainless Steel",
    )
    terms = suggest(
        "Kids' Water Bottle, Stainless Steel",
        "A small insulated stainless steel bottle for school bags.",
        titles,
    )
    assert terms == ["insulated"]


def test_model_codes_run_into_their_word_are_words_not_sizes_said_one_by_one():
    shop = [
        Product("X-1", "travel enamel model4392 model18231 candle"),
        Product("X-2", "soy wool model3536 model18231 candle"),
    ]
    _, found, _ = CatalogueMatcher(shop, "Fieldhouse").read(
        "Fieldhouse travel enamel model4392 model18231 candle - a good choice."
    )
    assert {sku for unit in found for sku in unit} == {"X-1"}


@pytest.mark.parametrize(
    "description",
    [
        "A desk lamp that lacks a dimmable driver.",
        "Uses a halogen bulb instead of an LED desk lamp panel.",
        "Brighter than most dimmable lamps.",
    ],
)
def test_what_a_description_says_the_product_is_not_is_not_suggested(description):
    terms = {term.casefold() for term in suggest("Banker's Lamp, Brass", description, TITLES)}
    assert terms.isdisjoint({"dimmable", "led", "led desk lamp"})
