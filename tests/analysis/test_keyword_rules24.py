"""Rounds 24 to 29 of issue 30 (from heldout29's to heldout36's misses; other products
here): keyword suggestions, what a description strikes through, names in capitals, a
clause about another product of ours or about one part, an add-on, hearsay, a kit's parts
and a one-word thing fewer than half the category use."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SLIDE = "Slide Rower, Air Resistance"


@pytest.mark.parametrize(
    "description, expected",
    [
        ("It is foldable.", ["foldable"]),
        ("~~Foldable~~ A fixed steel frame.", []),
        ("Tested by the Foldable Fitness Lab in Ghent; the frame is fixed.", []),
        ("The frame is fixed; it is sold beside our foldable rowing machine.", []),
        ("Like all our rowers it is foldable.", ["foldable"]),
        ("Only the seat rail is foldable, to store it upright.", []),
        ("A foldable rail kit is available for this model.", []),
        ("Reviewers call it foldable, but the rail is fixed.", []),
    ],
)
def test_what_a_description_does_not_claim(description, expected):
    assert terms(SLIDE, description) == expected


FENCES = [
    ("Fences", "Electric Fence Starter Kit, Mains Energiser"),
    ("Fences", "Solar Energiser for Electric Fence"),
    ("Fences", "Electric Fence Energiser, Battery"),
    ("Fences", "Electric Fence Tape, 200 m"),
    ("Fences", "Electric Fence Posts, Pack of 10"),
    ("Fences", "Electric Fence Tester"),
    ("Fences", "Electric Fence Gate Handle"),
    ("Fences", "Electric Fence Starter Kit for Horses"),
    ("Fences", "Electric Fence Insulators, Pack of 25"),
]


def test_a_kits_parts_and_a_thing_few_titles_use_are_no_keywords():
    # "energiser": 3 of the 8 other titles, a thing, and a part of this kit
    assert (
        terms("Electric Fence Starter Kit, Solar", "Energiser, 200 m of tape and 20 posts.", FENCES)
        == []
    )
    assert terms("Electric Fence Tester", "It clips onto the energiser.", FENCES) == []
