"""Round 8 of issue 30: keyword suggestions, one test per rule (an accessory of the
category's kind, a term of another thing before "of", a term before a denied verb, a
word of an "X and Y" term), each with what must still be suggested."""

import pytest

from commerce_api.analysis.listing_keywords import KeywordCorpus, kind_of
from commerce_api.analysis.listing_pairs import half_of_a_pair, joined_pairs, pairs_said
from commerce_api.analysis.listing_referents import another_thing, phrase_words, serves_a_kind

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

HEATERS = [
    ("Fan heaters", "Fan Heater 2000 W, Heat and Cool, Timer"),
    ("Fan heaters", "Ceramic Fan Heater, Heat & Cool, Tip-Over Switch"),
    ("Fan heaters", "Oscillating Fan Heater, Heat and Cool, Remote Control"),
    ("Fan heaters", "Fan Heater with Thermostat, Remote Control, Timer"),
    ("Fan heaters", "Tower Fan Heater, Remote Control, Tip-Over Switch"),
    ("Fan heaters", "Compact Fan Heater 1500 W"),
    ("Fan heaters", "Desk Fan Heater, Timer"),
]


def terms(corpus, title, description, category="Fan heaters"):
    return [k["term"] for k in corpus.suggest(category, title, description=description)]


def marked(text):
    words = phrase_words(text)
    return {words[i] for i in another_thing(words)}


@pytest.mark.parametrize(
    "title, accessory",
    [
        ("Heater Guard for Any Fan Heater", True),  # after "for"
        ("Fan Heater Cover, Dust Proof", True),  # the kind before another noun
        ("Heater Filter Pack", True),
        ("Fan Heater 2000 W, Timer", False),  # of the kind
        ("Convector Radiator, Timer", False),  # of the kind in other words
        ("Heater 2000 W", False),  # a number after the kind is no noun
    ],
)
def test_an_accessory_of_the_categorys_kind_is_told(title, accessory):
    assert serves_a_kind(title, kind_of(title), {"heater"}) is accessory


def test_an_accessory_of_the_categorys_kind_suggests_nothing():
    corpus = KeywordCorpus(HEATERS)
    said = "A mesh guard for heat and cool fan heaters, with or without a remote control."
    assert terms(corpus, "Heater Guard for Any Fan Heater", said) == []
    # a product of the kind saying the same of itself is still suggested
    assert "remote control" in terms(
        corpus, "Compact Fan Heater 1500 W", "It comes with a remote control."
    )


@pytest.mark.parametrize(
    "text, other",
    [
        ("the remote control of our tower heaters", {"remote", "control", "tower", "heaters"}),
        ("use the timer of a larger unit instead", {"timer", "larger", "unit"}),
        ("the tip-over switch of most heaters", {"tip", "over", "switch"}),
    ],
)
def test_a_term_before_of_and_a_determiner_of_another_thing_is_that_things(text, other):
    assert other <= marked(text)


def test_a_term_of_this_or_its_thing_stays_the_products():
    assert not marked("the remote control of this heater")
    assert not marked("the timer of its base")
    corpus = KeywordCorpus(HEATERS)
    title = "Compact Fan Heater 1500 W"
    assert terms(corpus, title, "The remote control of our tower heaters does not fit.") == []
    assert "remote control" in terms(corpus, title, "The remote control of this heater clips on.")


@pytest.mark.parametrize(
    "text, denied",
    [
        ("Remote control is not offered here.", {"remote", "control"}),
        ("The timer isn't included.", {"timer"}),
        ("A timer switch cannot be fitted.", {"timer", "switch"}),
    ],
)
def test_a_term_before_a_denied_verb_is_not_the_products(text, denied):
    assert denied <= marked(text)


def test_a_denied_verb_after_a_function_word_denies_no_term():
    # "that does not" and "it is not": no noun phrase right before the verb
    assert not marked("A tip-over switch that does not trip when nudged.")
    assert not marked("It is not loud.")
    assert not marked("It can turn itself off.")  # "can" without "n't"
    corpus = KeywordCorpus(HEATERS)
    said = terms(corpus, "Compact Fan Heater 1500 W", "Remote control is not offered here.")
    assert said == []


def test_a_word_the_titles_say_in_an_and_pair_is_no_suggestion_alone():
    pairs, _ = joined_pairs(title for _, title in HEATERS)
    assert pairs[("heat", "and", "cool")] == 3  # "Heat & Cool" too
    counts = {("cool",): 3, ("timer",): 3}
    assert half_of_a_pair("cool", pairs, counts, 2)
    assert not half_of_a_pair("timer", pairs, counts, 2)
    corpus = KeywordCorpus(HEATERS)
    said = terms(corpus, "Compact Fan Heater 1500 W", "Blows cool air in summer.")
    assert said == []


def test_an_and_pair_is_suggested_whole_when_the_description_says_it():
    corpus = KeywordCorpus(HEATERS)
    title = "Compact Fan Heater 1500 W"
    assert "heat and cool" in terms(corpus, title, "A quiet heater with heat and cool modes.")
    assert "heat and cool" in terms(corpus, title, "Quiet and heat and cool.")  # overlapping
    # not after a negation, not of another thing
    assert terms(corpus, title, "It is not heat and cool: it only warms.") == []
    assert terms(corpus, title, "Unlike heat and cool models, it only warms.") == []


def test_pairs_said_needs_both_halves_said_of_the_product():
    pairs = {("heat", "and", "cool"): 3}
    assert pairs_said("heat and cool", pairs, {("heat",): "heat", ("cool",): "cool"})
    assert not pairs_said("heat and cool", pairs, {("cool",): "cool"})
    assert not pairs_said("heat or cool", pairs, {("heat",): "heat", ("cool",): "cool"})
