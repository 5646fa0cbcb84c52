"""Round 7 of issue 30: keyword suggestions only from words said of the product
(``analysis/listing_referents.py``), one test per rule, each with what must still be
suggested."""

import pytest

from commerce_api.analysis.listing_keywords import KeywordCorpus, standalone_words
from commerce_api.analysis.listing_referents import (
    another_thing,
    denies_kind,
    of_a_part,
    opening_phrase,
    phrase_words,
)

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

KETTLES = [
    ("Kettles", "Electric Kettle 1.7 L, Cordless, Auto Shut Off"),
    ("Kettles", "Glass Electric Kettle, Cordless"),
    ("Kettles", "Electric Kettle with Temperature Control, Cordless"),
    ("Kettles", "Cordless Electric Kettle, Stainless"),
    ("Kettles", "Gooseneck Kettle 1 L"),
    ("Kettles", "Stovetop Whistling Kettle"),
    ("Kettles", "Kettle Descaler Tablets"),
]


def terms(corpus, title, description, category="Kettles"):
    return [k["term"] for k in corpus.suggest(category, title, description=description)]


def marked(text):
    words = phrase_words(text)
    return {words[i] for i in another_thing(words)}


@pytest.mark.parametrize(
    "text, other",
    [
        ("to use after your electric kettle", {"electric", "kettle"}),
        ("it fits any cordless kettle base", {"cordless", "kettle", "base"}),
        ("it replaces the scale in other electric kettles", {"scale", "electric", "kettles"}),
        ("unlike a cordless kettle, it sits on the hob", {"cordless", "kettle"}),
        ("use it instead of an electric kettle", {"electric", "kettle"}),
        ("replace the worn filters of most electric kettles", {"filters", "electric"}),
    ],
)
def test_a_noun_phrase_after_your_any_fits_replaces_unlike_instead_is_another_thing(text, other):
    assert other <= marked(text)


def test_the_noun_phrase_after_another_thing_ends_at_a_function_word():
    # "instead of snapping" is another thing; "windproof" after "so it is" is the product's
    assert "windproof" not in marked("ribs flex instead of snapping, so it is windproof")
    assert "compact" not in marked("fits a coat pocket, the most compact umbrella we make")


def test_a_term_naming_another_thing_the_buyer_uses_is_not_suggested():
    corpus = KeywordCorpus(KETTLES)
    assert terms(corpus, "Kettle Descaler Tablets", "Use in your electric kettle monthly.") == []
    assert terms(corpus, "Gooseneck Kettle 1 L", "Fits any cordless base of ours too.") == []
    # said of the product itself, it is still suggested (round 12: not "electric", which
    # every title says before "kettle": a part of a longer term, see listing_parts)
    assert terms(corpus, "Gooseneck Kettle 1 L", "A cordless kettle with a slim spout.") == [
        "cordless"
    ]


def part(text, title_stems=frozenset(), kinds=frozenset({"kettle"}), known=(), doing=False):
    words = phrase_words(text)
    start = words.index("cordless") if "cordless" in words else words.index("noise")
    end = start + (1 if words[start] == "cordless" else 2)
    return of_a_part(words, start, end, title_stems, kinds, set(known), doing)


def test_a_modifier_before_another_noun_is_said_of_that_part():
    assert part("a cordless charging dock")
    assert part("a noise cancelling microphone keeps chat clear")
    assert part("an ergonomic cordless curved dock")  # over other modifiers to the noun
    # before the title's word, the category's kind or a term ending in one: the product
    assert not part("a cordless kettle", kinds={"kettle"})
    assert not part("a cordless glass kettle", title_stems={"glass"})
    assert part("a cordless travel kettle")
    assert not part("a cordless travel kettle", known={("travel", "kettle")})
    # no noun follows: a verb in "-s", a degree word, a preposition, the end
    assert not part("noise cancelling cuts bus rumble")
    assert not part("cordless enough for travel")
    assert not part("cordless without the base")
    assert not part("it is cordless")


def test_for_a_product_of_the_categorys_kind_only_what_a_part_does_counts():
    # "a leak-proof lid" makes a leak-proof bottle; "a noise cancelling microphone" makes
    # no noise cancelling earbuds
    assert not part("a cordless charging dock", doing=True)
    assert part("a noise cancelling microphone keeps chat clear", doing=True)


def test_a_term_said_of_a_part_is_not_suggested():
    corpus = KeywordCorpus(KETTLES)
    said = terms(corpus, "Kettle Descaler Tablets", "Safe for the cordless base station too.")
    assert said == []
    said = terms(corpus, "Stovetop Whistling Kettle", "It is cordless: it has no base at all.")
    assert "cordless" in said


def test_a_description_that_denies_the_categorys_kind_suggests_nothing():
    counts = {("electric", "kettle"): 4, ("kettle",): 7}
    assert denies_kind("This is not an electric kettle: it goes on the hob.", counts, {"kettle"}, 2)
    assert not denies_kind("An electric kettle, not a toy.", counts, {"kettle"}, 2)
    corpus = KeywordCorpus(KETTLES)
    said = terms(
        corpus, "Stovetop Whistling Kettle", "Not an electric kettle. A cordless handle stays cool."
    )
    assert said == []


def test_the_opening_noun_phrase_names_the_products_kind():
    assert opening_phrase("An oversized bath towel, 100 x 180 cm.") == (
        "oversized",
        "bath",
        "towel",
    )
    assert opening_phrase("A dog bed with a firm base.")[-2:] == ("dog", "bed")
    assert opening_phrase("Woven from cotton.") == ()
    corpus = KeywordCorpus(
        [
            ("Towels", "Cotton Bath Towel"),
            ("Towels", "Waffle Bath Towel"),
            ("Towels", "Bath Towel, Quick Dry"),
            ("Towels", "Cotton Bath Sheet"),
        ]
    )
    assert terms(corpus, "Cotton Bath Sheet", "An oversized bath towel.", "Towels") == [
        "bath towel"
    ]
    # only the kind may be new: "waffle" would be a claim of its own ("A digital kitchen
    # scale" of "Kitchen Scale 10 kg")
    corpus.add("Towels", "Waffle Bath Towel, Grey")
    said = terms(corpus, "Cotton Bath Sheet", "A waffle bath towel.", "Towels")
    assert "waffle bath towel" not in said


def test_degree_words_and_percentages_do_not_hide_a_standalone_word():
    title = {"umbrella"}
    assert "compact" in standalone_words("the most compact umbrella we make", set(), title)
    assert "compact" in standalone_words("compact enough for a backpack", set(), title)
    assert "cotton" in standalone_words("Woven from 100% cotton.", set(), title)
    assert "inch" not in standalone_words("a 13 inch laptop", set(), title)


def test_an_extra_soft_head_is_no_extra():
    corpus = KeywordCorpus(
        [
            ("Toothbrushes", "Electric Toothbrush, Sonic"),
            ("Toothbrushes", "Electric Toothbrush with Timer"),
            ("Toothbrushes", "Sonic Electric Toothbrush, Travel Case"),
            ("Toothbrushes", "Kids Sonic Toothbrush"),
        ]
    )
    said = terms(
        corpus,
        "Kids Sonic Toothbrush",
        "A small electric toothbrush with an extra-soft head.",
        "Toothbrushes",
    )
    assert "electric toothbrush" in said
    said = terms(
        corpus,
        "Kids Sonic Toothbrush",
        "An electric toothbrush head is available as an extra.",
        "Toothbrushes",
    )
    assert said == []
