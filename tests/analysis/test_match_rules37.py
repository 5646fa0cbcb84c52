"""Unit rules of round 37 (issue 30), from heldout53's and heldout54's misses (other brands
and words here): an exact title after a verb that opens an instruction ("Mix ...") is ours,
not another brand's name; the brand's showroom and its e-mail address name no product."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("Q-CLAY", "Green Kaolin Clay 250 g"),
    Product("Q-WIRE-19", "Brass Harp Wire, 19 Gauge"),
    Product("Q-WIRE-21", "Brass Harp Wire, 21 Gauge"),
    Product("Q-STAND", "Folding Music Stand"),
]


def named(text, brand="Brindlecote"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # an exact title after an opening verb: the verb is no brand's name
        ("Stir Green Kaolin Clay 250 g into warm water and leave it for a minute.", {"Q-CLAY"}),
        ("Soak Green Kaolin Clay 250 g overnight for a smoother paste.", {"Q-CLAY"}),
        # ... while another brand's name before it still makes it theirs
        ("I mixed Tarnwell Green Kaolin Clay 250 g into warm water.", set()),
        # the brand's showroom and its address
        (
            "Brindlecote's showroom (harp wire and stands) opens 09:00 to 19:00; call ahead or"
            " write to sales@brindlecote.example.",
            set(),
        ),
        ("Brindlecote's 19 gauge brass harp wire rings longest.", {"Q-WIRE-19"}),
    ],
)
def test_round_37(text, skus):
    assert named(text) == skus


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # another maker's thing made for the brand's things in the plural (round 38)
        ("Harrowgate make covers that fit Brindlecote folding music stands.", set()),
        ("Harrowgate make a cover that fits the Brindlecote Folding Music Stand.", {"Q-STAND"}),
    ],
)
def test_round_38(text, skus):
    assert named(text) == skus
