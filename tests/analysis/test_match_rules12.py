"""Unit rules of round 12 (issue 30), from heldout15's misses (other brands and words
here): the brand's name as a person's, colours a product comes in with "both", colour words
beyond the common ones."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product
from commerce_api.analysis.visibility_others import without_people

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("V-VASE-AM", "Ribbed Stoneware Vase 20 cm, Amber"),
    Product("V-VASE-SI", "Ribbed Stoneware Vase 20 cm, Sienna"),
    Product("V-APRON", "Split-Leg Pottery Apron"),
    Product("V-MAT", "Cork Pottery Wheel Mat"),
]


def named(text, brand="Velmoray"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("My old teacher, Martha Velmoray, wore a split-leg apron at the wheel.", set()),
        ("The potter Ada Velmoray keeps a cork wheel mat by the wheel.", set()),
        ("Velmoray's split-leg apron keeps clay off your knees.", {"V-APRON"}),
        ("I bought the Velmoray cork wheel mat.", {"V-MAT"}),
        # an exact full title is still its product, whoever is named
        ("My teacher, Martha Velmoray, wore a Split-Leg Pottery Apron.", {"V-APRON"}),
        ("Velmoray's ribbed vase comes in amber and sienna.", set()),
        (
            "Velmoray's ribbed vase comes in amber and sienna; I have both.",
            {"V-VASE-AM", "V-VASE-SI"},
        ),
        ("The sienna Velmoray ribbed vase looks warm.", {"V-VASE-SI"}),
        ("The Velmoray ribbed vase in crimson would be lovely.", set()),
    ],
)
def test_round_12_rules(text, skus):
    assert named(text) == skus


def test_a_person_of_the_brands_name_is_cut_out_and_a_sentence_start_is_not():
    assert "Velmoray" not in without_people("the potter Ada Velmoray said", ("velmoray",))
    assert without_people("The Velmoray mat.", ("velmoray",)) == "The Velmoray mat."
    assert without_people("I love Velmoray mats.", ("velmoray",)) == "I love Velmoray mats."
