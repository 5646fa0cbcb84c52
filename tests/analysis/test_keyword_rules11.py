"""Round 11 of issue 30: keyword suggestions, one test per rule (a part of a longer term
of the category; terms joined by "to"; the whole term before its new words when the title
has its end; another product of the shop after a referral; what a thing works on), each
with what must still be suggested."""

import pytest

from commerce_api.analysis.listing_keywords import KeywordCorpus
from commerce_api.analysis.listing_parts import parts_of_longer_terms
from commerce_api.analysis.listing_referents import another_thing, phrase_words

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

OPENERS = [
    ("Openers", "Garage Door Opener, Belt Drive, Battery Backup"),
    ("Openers", "Chain Drive Garage Door Opener with Night Light"),
    ("Openers", "Smart Garage Door Opener, Battery Backup"),
    ("Openers", "Quiet Garage Door Opener, Belt Drive"),
    ("Openers", "Screw Drive Opener with Battery Backup"),
    ("Openers", "Garage Door Opener Kit, Belt Drive, Battery Backup"),
    ("Openers", "Wall Button for a Garage Door Opener"),
    ("Openers", "Sectional Door Motor, Belt Drive"),
]
SCOOTERS = [
    ("Scooters", "Kick Scooter, Light Up Wheels, Lean to Steer"),
    ("Scooters", "Three Wheel Kick Scooter, Lean to Steer"),
    ("Scooters", "Folding Kick Scooter, Light Up Wheels"),
    ("Scooters", "Kick Scooter with Seat, Lean to Steer, Light Up Wheels"),
    ("Scooters", "Kick Scooter, Night Vision Lights"),
    ("Scooters", "Kick Scooter, Big Deck, Night Vision Lights"),
    ("Scooters", "Stunt Kick Scooter, Night Vision Lights"),
]


def terms(rows, title, description, category):
    corpus = KeywordCorpus(rows)
    return [k["term"] for k in corpus.suggest(category, title, description=description)]


def test_parts_of_a_longer_term_are_found_from_the_titles_neighbours():
    titles = [title for _, title in OPENERS]
    parts = parts_of_longer_terms(titles, lambda word: False, 2)
    assert ("door", "opener") in parts  # always after "garage"
    # always before "opener" too: the whole term is suggested, never this part (round 12)
    assert ("garage", "door") in parts
    # "belt drive" stands between commas; the lone word "drive" follows "belt" in half
    # the titles that have it, enough for a word that describes nothing ("foam")
    assert ("belt", "drive") not in parts and ("drive",) in parts
    assert ("battery", "backup") not in parts


@pytest.mark.parametrize(
    "title, description, expected",
    [
        # a part of a longer term is no suggestion ("night" of "night vision lights")
        ("Kick Scooter, Big Deck", "It goes dark at night: no lights.", []),
        # the term joined by "to" is suggested whole, never a half
        ("Kick Scooter, Big Deck", "It steers with the bar.", []),
        ("Kick Scooter, Big Deck", "A big deck and a lean to steer front.", ["lean to steer"]),
        ("Kick Scooter, Big Deck", "It steers with the bar: not lean to steer.", []),
        # a property before a term stays its own suggestion ("light up wheels" is said)
        ("Kick Scooter, Big Deck", "Light up wheels glow as they turn.", ["light up wheels"]),
    ],
)
def test_a_part_of_a_longer_term_and_a_pair_joined_by_to(title, description, expected):
    assert terms(SCOOTERS, title, description, "Scooters") == expected


def test_the_whole_term_wins_over_its_new_words_when_the_title_has_its_end():
    # "garage door" alone would be a part of the term; the title says "Opener"
    found = terms(
        OPENERS,
        "Screw Drive Opener with Battery Backup",
        "A garage door opener for heavy wooden doors.",
        "Openers",
    )
    assert found == ["garage door opener"]
    # and a part said of a title of another kind is no suggestion either
    found = terms(
        OPENERS, "Sectional Door Motor, Belt Drive", "A quiet garage door opener.", "Openers"
    )
    assert "door opener" not in found and "garage door" not in found


@pytest.mark.parametrize(
    "text, other",
    [
        ("Clips to the vent; for the desk see our charging stand.", {"charging", "stand"}),
        ("For pancakes try our electric griddle.", {"electric", "griddle"}),
        ("Check out our window vacuum too.", {"window", "vacuum"}),
        ("The fingertips do not work on a touchscreen.", {"touchscreen"}),
        ("Our charging stand folds flat.", set()),  # the product itself
        ("A charging stand that works with any phone.", {"phone"}),
    ],
)
def test_a_referral_and_what_a_thing_works_on_are_another_thing(text, other):
    words = phrase_words(text)
    marked = {words[i] for i in another_thing(words)}
    assert other <= marked
    if not other:
        assert not marked & {"charging", "stand"}


@pytest.mark.parametrize(
    "description, expected",
    [
        # a negation anywhere earlier in the clause, or a condition, asserts nothing
        ("Bright at dusk, but it has no lights that light up wheels.", []),
        ("If you want light up wheels, choose the bigger one.", []),
        ("Light up wheels would be nice on a later model.", []),
        ("Light up wheels are sold separately.", []),
        # a clause after it is the product's again; "non-slip" denies nothing
        ("No seat. Light up wheels glow as they turn.", ["light up wheels"]),
        ("A non-slip deck with light up wheels.", ["light up wheels"]),
    ],
)
def test_a_negation_or_a_condition_holds_to_the_end_of_its_clause(description, expected):
    assert terms(SCOOTERS, "Kick Scooter, Big Deck", description, "Scooters") == expected
