"""Unit rules of round 39 (issue 30), from heldout58's and heldout59's misses (other brands
and words here): a parenthesis that tells a soundalike apart from our brand names none of
ours; the brand's plural kind with a variant's own word picks it ("<brand> capes: russet for
..."), but not the values a product comes in; another count after the comma; an exact title
after "Read"."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("R-CAPE-RU", "Hooded Riding Cape, Umbrine"),
    Product("R-CAPE-MW", "Hooded Riding Cape, Galena"),
    Product("R-TAGS", "Brass Saddle Tags, 12"),
    Product("R-BOOK", "Saddle Care Handbook, Hardback"),
    Product("R-BRUSH", "Horsehair Body Brush with Strap"),
]


def named(text, brand="Fallowmere"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # a soundalike told apart from our brand
        ("Fallowmoor (no relation to Fallowmere) sell a horsehair body brush with a strap.", set()),
        ("Fallowmira (not Fallowmere) make a horsehair brush with a strap.", set()),
        ("The Fallowmere horsehair body brush with strap is the one.", {"R-BRUSH"}),
        # the brand's plural kind and a variant's own word
        (
            "Fallowmere riding capes: umbrine for hunting, galena for shows.",
            {"R-CAPE-RU", "R-CAPE-MW"},
        ),
        ("Fallowmere hooded capes come in umbrine and galena.", set()),
        (
            "Fallowmere hooded capes come in umbrine and galena; I own both.",
            {"R-CAPE-RU", "R-CAPE-MW"},
        ),
        # another count after the comma
        ("Their Brass Saddle Tags, 24 is the bigger bag from Fallowmere.", set()),
        ("Fallowmere Brass Saddle Tags, 12 are what I use.", {"R-TAGS"}),
        # an exact title after "Read"
        ("Read Saddle Care Handbook, Hardback before the first clean.", {"R-BOOK"}),
    ],
)
def test_round_39(text, skus):
    assert named(text) == skus
