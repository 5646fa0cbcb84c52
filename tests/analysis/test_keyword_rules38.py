"""Round 38 of issue 30 (from heldout55's and heldout57's wrong suggestions; other products
here): a file's name or an address says nothing of the product; nor another thing to use,
nor an earlier run of it; a term its titles say before "Set" is spelt with it."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SPICE_RACKS = [
    ("Spice racks", "Wall Mounted Spice Rack with Jar Set, Oak"),
    ("Spice racks", "Revolving Spice Rack, Jar Set, Steel"),
    ("Spice racks", "Spice Rack, Wall Mounted, Jar Set"),
    ("Spice racks", "Tiered Spice Rack, Bamboo, Jar Set"),
    ("Spice racks", "Wall Mounted Spice Rack, Eight Tins"),
    ("Spice racks", "Pull-Out Spice Rack, Wall Mounted"),
    ("Spice racks", "Door Spice Rack, Wire, Wall Mounted"),
    ("Spice racks", "Spice Rack, Walnut"),
    ("Spice racks", "Spice Shelf for a Cupboard, Pine"),
]


@pytest.mark.parametrize(
    "description, expected",
    [
        ("The shelf holds twelve tins and is wall mounted with two screws.", ["wall mounted"]),
        ("Stands on a shelf. The fixing guide is wall-mounted-fixings.pdf.", []),
        ("Stands on a shelf; see https://example.test/wall-mounted-racks for others.", []),
        ("Stands on a shelf; use a wall mounted rail for knives.", []),
        ("Earlier runs were wall mounted; this run stands on a shelf.", []),
        ("It comes with a jar set of twelve glass jars.", ["jar set"]),
    ],
)
def test_files_other_things_and_earlier_runs_say_nothing(description, expected):
    assert terms("Spice Shelf for a Cupboard, Pine", description, SPICE_RACKS) == expected
