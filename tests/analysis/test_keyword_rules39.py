"""Round 39 of issue 30 (from heldout58's and heldout59's wrong suggestions; other products
here): what the packaging says or has, and what people do, say nothing of the product."""

import pytest

from tests.analysis.test_keyword_rules12 import terms
from tests.analysis.test_keyword_rules35 import WATCH_BOXES

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


@pytest.mark.parametrize(
    "description, expected",
    [
        ("The drawers are velvet lined in grey.", ["velvet lined"]),
        ("The box says velvet lined, but these drawers are bare beech.", []),
        ("The gift box it ships in is velvet lined.", []),
        ("Made for collectors who keep their watches velvet lined and locked.", []),
    ],
)
def test_the_packaging_and_people_say_nothing(description, expected):
    assert terms("Watch Box, Two Drawers, Mirror", description, WATCH_BOXES) == expected
