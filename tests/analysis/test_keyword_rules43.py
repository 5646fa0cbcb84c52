"""Round 43 of issue 30 (from heldout68's misses and a wrong suggestion it would have made;
other products here): a noun after "has", "with" or a count spelt out is said on its own; two
parts set side by side are asides with two-word names too."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

FORKS = [
    ("Carving forks", "Carving Fork, 20 Prongs, Walnut"),
    ("Carving forks", "Carving Fork with Curved Prongs"),
    ("Carving forks", "Carving Fork, Forged Prongs"),
    ("Carving forks", "Carving Fork, Hollow Handle"),
    ("Carving forks", "Roast Lifter with Prongs"),
    ("Carving forks", "Carving Fork, Twin Prongs, Beech"),
    ("Carving forks", "Meat Fork, Walnut Handle"),
    ("Carving forks", "Carving Fork, Ash"),
]


@pytest.mark.parametrize(
    "description, expected",
    [
        ("It has prongs of forged steel.", ["prongs"]),
        ("Two prongs of forged steel.", ["prongs"]),
        ("The hanging loop is walnut; the shaft is steel.", []),
    ],
)
def test_a_noun_after_has_or_a_count(description, expected):
    assert terms("Carving Fork, Ash", description, FORKS) == expected
