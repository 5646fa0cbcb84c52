"""Round 9 of issue 30: keyword suggestions, one test per rule (an accessory whose title
names no kind of the category while its description names one; a term placed on another
thing), each with what must still be suggested."""

import pytest

from commerce_api.analysis.listing_keywords import KeywordCorpus, kind_of
from commerce_api.analysis.listing_referents import (
    another_thing,
    cached_stem,
    names_a_served_kind,
    phrase_words,
)

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

KETTLES = [
    ("Electric kettles", "Electric Kettle 1.7 L, Keep Warm, Temperature Control"),
    ("Electric kettles", "Glass Electric Kettle, Temperature Control"),
    ("Electric kettles", "Electric Kettle with Keep Warm, 1.5 L"),
    ("Electric kettles", "Cordless Electric Kettle, Keep Warm, Temperature Control"),
    ("Electric kettles", "Travel Electric Kettle 0.8 L"),
    ("Electric kettles", "Stainless Electric Kettle, Temperature Control"),
    ("Electric kettles", "Gooseneck Electric Kettle, Keep Warm"),
]


def terms(corpus, title, description, category="Electric kettles"):
    return [k["term"] for k in corpus.suggest(category, title, description=description)]


def marked(text):
    words = phrase_words(text)
    return {words[i] for i in another_thing(words)}


@pytest.mark.parametrize(
    "title, description, accessory",
    [
        ("Limescale Filter, Pack of 3", "Sits in the spout of an electric kettle.", True),
        ("Tray Mat", "Sized for a kettle and two mugs side by side.", True),
        ("Descaler Tablets", "Clean a glass kettle with temperature control.", True),
        # the opening noun phrase says what the product is
        ("Tea Maker, 1.5 L", "An electric kettle with a tea basket.", False),
        ("Travel Boiler", "A pair of small kettles, one for each room.", False),
        ("Tea Maker, 1.5 L", "Brews loose tea in five minutes.", False),  # names no kind
        ("Glass Kettle, 1 L", "Fits beside any other kettle.", False),  # of the kind
    ],
)
def test_an_accessory_is_told_by_a_kind_its_description_names(title, description, accessory):
    assert names_a_served_kind(description, kind_of(title), {cached_stem("kettle")}) is accessory


def test_an_accessory_its_title_does_not_call_one_suggests_nothing():
    corpus = KeywordCorpus(KETTLES)
    assert (
        terms(corpus, "Limescale Filter, Pack of 3", "Fits an electric kettle with keep warm.")
        == []
    )
    # a product of the kind in other words, saying so as it opens, is still suggested
    assert "electric kettle" in terms(
        corpus, "Tea Maker, 1.5 L", "An electric kettle with a tea basket."
    )


@pytest.mark.parametrize(
    "text, other",
    [
        ("The keep warm setting is only on our glass kettles", {"keep", "warm", "glass"}),
        ("Temperature control comes only with our larger kettles", {"temperature", "control"}),
        ("Keep warm is found only on other models", {"keep", "warm", "models"}),
        ("Temperature control is in most kettles", {"temperature", "control", "kettles"}),
    ],
)
def test_a_term_placed_on_another_thing_is_that_things(text, other):
    assert other <= marked(text)


def test_a_term_placed_on_the_products_own_part_stays_its_own():
    assert not marked("Temperature control is on the handle")
    assert not marked("Keep warm is in a separate base")  # "a": no other thing by itself
    corpus = KeywordCorpus(KETTLES)
    title = "Travel Electric Kettle 0.8 L"
    assert terms(corpus, title, "Temperature control is only on our glass kettles.") == []
    assert "temperature control" in terms(corpus, title, "Temperature control is on the handle.")
