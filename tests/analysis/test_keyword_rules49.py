"""Round 49 of issue 30 (from heldout80's wrong suggestion; other products here): what an
earlier pattern, run or model of any name had is not the product's ("The old pattern had a
depth scale; this one is marked by hand")."""

import pytest

from tests.analysis.test_keyword_rules12 import terms
from tests.analysis.test_keyword_rules48 import PLANTERS

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


@pytest.mark.parametrize(
    "description, expected",
    [
        ("The old pattern had a depth scale; this one is marked by hand.", []),
        ("The previous casting came with a release lever.", []),
        ("This pattern has a depth scale.", ["depth scale"]),
    ],
)
def test_what_an_earlier_pattern_had(description, expected):
    assert terms("Bulb Planter, Ash Handle", description, PLANTERS) == expected
