"""Round 13 of issue 30: keyword suggestions, a term promised only for a later model
("planned for next year's model", "coming with the next generation", "upcoming models",
"in development") is no claim about the product; the same term said of this product is."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

TITLE = "Slide Rower, Air Resistance"


@pytest.mark.parametrize(
    "description, expected",
    [
        ("A foldable frame comes with next year's model; this one is fixed.", []),
        ("Foldable rails are coming with the next generation.", []),
        ("Upcoming rowers will be foldable.", []),
        ("A foldable edition is in development.", []),
        ("Foldable, coming soon.", []),
        ("It will be foldable in a later version.", []),
        ("Foldable legs are expected next spring.", []),
        # said of this product, beside a later model's promise
        ("It is foldable; a quieter model comes next year.", ["foldable"]),
        ("This rower is foldable and light.", ["foldable"]),
        ("The new frame is foldable.", ["foldable"]),
        # what buyers wish or ask for, what it was, what it stands in for
        ("Buyers ask for a foldable frame; this one is fixed.", []),
        ("I wish it were foldable.", []),
        ("It used to be foldable before the refresh.", []),
        ("It is no longer foldable.", []),
        ("Formerly foldable, now bolted.", []),
        ("A foldable rowing machine alternative for small rooms.", []),
        ("It is used to train legs; foldable for storage.", ["foldable"]),
        # "not X but Y": Y is said of it
        ("Not magnetic but foldable.", ["foldable"]),
        # what another model has; the people a term names
        ("The 12 V version has a foldable frame; this one has none.", []),
        ("The pro model comes foldable.", []),
        ("This model comes foldable.", ["foldable"]),
        ("The model comes foldable.", ["foldable"]),
        ("Rowing machine owners love it.", []),
        # "semi", "nearly", "faux"... before a term: not quite the term
        ("It is semi foldable.", []),
        ("Nearly foldable: only the seat comes off.", []),
        ("A rowing machine for owners of small flats.", ["rowing machine"]),
    ],
)
def test_a_later_model_is_not_this_product(description, expected):
    assert terms(TITLE, description) == expected


OVENS = [
    ("Ovens", "Pizza Oven, Pizza Stone, Dual Fuel"),
    ("Ovens", "Pizza Oven with Pizza Stone, Gas"),
    ("Ovens", "Dual Fuel Pizza Oven, Pizza Stone, Black"),
    ("Ovens", "Outdoor Pizza Oven, Dual Fuel, Pizza Stone"),
    ("Ovens", "Pizza Oven, Pizza Stone, Dual Fuel, Cover"),
    ("Ovens", "Wood Fired Oven, Pizza Stone"),
    ("Ovens", "Pizza Oven, Dual Fuel, Thermometer"),
    ("Ovens", "Pizza Peel, Aluminium"),
    ("Ovens", "Pizza Oven, Dual Fuel, Folding Legs"),
]


@pytest.mark.parametrize(
    "description, expected",
    [
        # a term sharing a word with another term the title has is a term of its own
        ("The 13 in pizza stone lifts out for cleaning.", ["pizza stone"]),
        ("Cook on the pizza stone floor.", ["pizza stone"]),
        # ... unless it is said of other models
        ("The pizza stone of countertop models cracks; this one has a steel floor.", []),
    ],
)
def test_a_term_sharing_a_word_with_the_titles_term(description, expected):
    assert terms("Pizza Oven, Dual Fuel, Carry Cover", description, OVENS) == expected


@pytest.mark.parametrize(
    "description, expected",
    [
        # round 14: specification lines, and a line ends its clause
        ("Foldable: no (bolted frame).", []),
        ("Foldable: none", []),
        ("Magnetic resistance: no\nFoldable: yes", ["foldable"]),
        ("Foldable: yes, in two parts.", ["foldable"]),
        # what the buyer is sent elsewhere for
        ("Air only; for magnetic resistance see our RM range.", []),
    ],
)
def test_specification_lines_and_referrals(description, expected):
    assert terms(TITLE, description) == expected


def test_a_word_always_before_a_colour_is_part_of_its_name():
    rows = [
        ("Lights", "Garden Lights, Warm White, Dusk to Dawn"),
        ("Lights", "Warm White Garden Lights, 6 Pack"),
        ("Lights", "Garden Lights, Warm White"),
        ("Lights", "Spot Light, Warm White, Dusk to Dawn"),
        ("Lights", "Fence Lights, Warm White, Dusk to Dawn"),
        ("Lights", "Garden Lights, Dusk to Dawn"),
        ("Lights", "Bollard Lights, Dusk to Dawn"),
    ]
    assert "warm" not in terms("Lantern, Cool White", "A warm white glow.", rows)


@pytest.mark.parametrize(
    "description, expected",
    [
        # round 15: what the first or original version had; what the product fits has
        ("The first version had a foldable frame; this one is welded.", []),
        ("Fits our rowers with magnetic resistance.", []),
        ("It fits any rail and is foldable.", ["foldable"]),
    ],
)
def test_an_earlier_version_and_what_the_product_fits(description, expected):
    assert terms(TITLE, description) == expected


@pytest.mark.parametrize(
    "description, expected",
    [
        # round 16: "and" before a new noun phrase ends a negation; what you need is another
        ("No seat rail to oil, and it is foldable.", ["foldable"]),
        ("No seat rail and foldable legs.", []),
        ("For stairs you still need a foldable rowing machine.", []),
    ],
)
def test_a_negation_ends_before_a_new_phrase(description, expected):
    assert terms(TITLE, description) == expected
