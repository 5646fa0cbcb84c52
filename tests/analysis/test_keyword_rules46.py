"""Round 46 of issue 30 (from heldout74's wrong suggestion; other products here): a term most
of whose titles say it after "Set" is spelt with it ("set screw", as "nozzle set" is spelt
with the "set" after it since round 38)."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

COLLARS = [
    ("Shaft collars", "Shaft Collar with Set Screw, 20 mm"),
    ("Shaft collars", "Shaft Collar, Set Screw, Steel"),
    ("Shaft collars", "Set Screw Shaft Collar, 12 mm"),
    ("Shaft collars", "Clamp Collar, Set Screw, Black Oxide"),
    ("Shaft collars", "Shaft Collar, Split Clamp"),
    ("Shaft collars", "Shaft Collar, Black Oxide, 25 mm"),
    ("Shaft collars", "Two-Piece Shaft Collar"),
]


@pytest.mark.parametrize(
    "description, expected",
    [
        ("It locks to the shaft with a set screw.", ["set screw"]),
        ("Clamps by friction; no screw touches the shaft.", []),
    ],
)
def test_a_term_said_after_set_is_spelt_with_it(description, expected):
    assert terms("Shaft Collar, Black Oxide, 25 mm", description, COLLARS) == expected
