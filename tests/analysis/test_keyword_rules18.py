"""Round 18 of issue 30 (from heldout19's misses; other products here): keyword
suggestions. A term the buyer already has ("the rowing machines you already own") or that
stands beside the product ("fit it beside a rowing machine") is another thing's; a phrase
the titles say after one number ("5-Year Warranty") is suggested with it, or not at all."""

import pytest

from commerce_api.analysis.listing_keywords import KeywordCorpus
from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


@pytest.mark.parametrize(
    "description, expected",
    [
        ("Set it beside the foldable rowing machines you already own.", []),
        ("Fit it next to a foldable rowing machine.", []),
        ("Mount it alongside any foldable frame.", []),
        ("The foldable rails that you have stay put.", []),
        # said of the product
        ("It is foldable, and you already have room for it.", ["foldable"]),
        ("A foldable rowing machine you can store upright.", ["rowing machine", "foldable"]),
    ],
)
def test_what_the_buyer_has_or_what_it_stands_beside_is_another_thing(description, expected):
    assert terms("Slide Rower, Air Resistance", description) == expected


HEATERS = [
    ("Heaters", "Oil Heater, 5-Year Warranty, Timer"),
    ("Heaters", "Panel Heater with Timer, 5-Year Warranty"),
    ("Heaters", "Fan Heater, 5 Year Warranty"),
    ("Heaters", "Convector Heater, 5-Year Warranty, Timer"),
    ("Heaters", "Halogen Heater, 5-Year Warranty"),
    ("Heaters", "Ceramic Heater, 12 Heat Settings, Timer"),
    ("Heaters", "Tower Heater, 8 Heat Settings"),
    ("Heaters", "Patio Heater, 3 Heat Settings"),
    ("Heaters", "Radiant Heater, 6 Heat Settings"),
]


@pytest.mark.parametrize(
    "title, description, expected",
    [
        # a measure's words with the number the titles give them
        ("Infrared Heater", "Comes with a 5-year warranty.", ["5 year warranty"]),
        ("Infrared Heater", "Our year warranty covers parts.", []),
        ("Infrared Heater", "Backed by a 2 year warranty.", []),
        # a phrase said after several numbers is suggested without one
        ("Infrared Heater", "It has 4 heat settings.", ["heat settings"]),
    ],
)
def test_a_measure_is_suggested_with_its_number(title, description, expected):
    corpus = KeywordCorpus(HEATERS)
    found = corpus.suggest("Heaters", title, description=description, included=False)
    assert [k["term"] for k in found] == expected
