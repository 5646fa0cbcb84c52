"""Round 50 of issue 30 (from heldout81's and heldout82's wrong suggestions; other products
here): a word after a capital letter alone is a letter's shape ("a T handle"), no term by
itself; what owners make for it themselves is not the product's ("many owners fit their own
depth scale"); "It is a <kind>" says what the product is."""

import pytest

from tests.analysis.test_keyword_rules12 import terms
from tests.analysis.test_keyword_rules48 import PLANTERS

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

HANDLES = [
    ("Bulb planters", "Bulb Planter, T Handle"),
    ("Bulb planters", "Bulb Planter with Handle, Depth Scale"),
    ("Bulb planters", "Bulb Planter, Handle Grip"),
    ("Bulb planters", "Steel Bulb Planter, Handle"),
    ("Bulb planters", "Bulb Planter, Release Lever"),
    ("Bulb planters", "Soil Corer 15 cm"),
]


@pytest.mark.parametrize(
    "title, description, expected",
    [
        ("Soil Corer with Ash Handle", "It is a bulb planter with a depth scale.", None),
        ("Bulb Planter, Ash Handle", "Many owners fit their own depth scale.", []),
    ],
)
def test_owners_and_subjects(title, description, expected):
    found = sorted(terms(title, description, PLANTERS))
    assert found == (expected if expected is not None else ["bulb planter", "depth scale"])


def test_a_letter_shape_is_no_term():
    assert "handle" not in terms("Soil Corer 15 cm", "Finished with a T handle.", HANDLES)
