"""Unit rules of round 35 (issue 30), from heldout48's and heldout49's misses (other brands
and words here): an event named after the brand; a variant's colour said of a thing whose
head noun no title has ("a teal cotton apron"); an amount after "a" said of a thing no title
has ("a 3 kg kettlebell"), unless it is what holds the product ("in a 5 kg sack"); two
variants named in one name ("<brand> Bath Towels in Teal and Ochre"); a second size said
alone in another clause ("and in 12 mm for the edging", "and the 3 m one")."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("T-TOWEL-TL", "Waffle Cotton Bath Towel 70 x 140 cm, Teal"),
    Product("T-TOWEL-OC", "Waffle Cotton Bath Towel 70 x 140 cm, Ochre"),
    Product("T-BELL-2", "Cast Iron Training Kettlebell 2 kg"),
    Product("T-BELL-6", "Cast Iron Training Kettlebell 6 kg"),
    Product("T-TAPE-8", "Woven Edging Tape 8 mm, 25 m Reel"),
    Product("T-TAPE-12", "Woven Edging Tape 12 mm, 25 m Reel"),
    Product("T-RAIL-1", "Galvanised Towel Rail 1 m"),
    Product("T-RAIL-3", "Galvanised Towel Rail 3 m"),
    Product("T-PEAT-5", "Sphagnum Potting Peat 5 kg"),
    Product("T-PEAT-10", "Sphagnum Potting Peat 10 kg"),
    Product("T-TRAY", "Seed Sowing Tray with Lid"),
]


def named(text, brand="Orrinwade"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # an event named after the brand is no product of ours, whatever words it has
        (
            "At the Orrinwade Garden Show a stall sold a seed sowing tray with a lid made from"
            " old crates.",
            set(),
        ),
        ("The Orrinwade Open gave every finisher a cast iron kettlebell.", set()),
        ("Orrinwade's seed sowing tray with lid is the one I use.", {"T-TRAY"}),
        # a variant's colour said of another thing: the head noun no title has
        ("Hang the Orrinwade waffle cotton bath towel beside a teal cotton apron.", set()),
        ("The teal Orrinwade waffle bath towel dries fastest.", {"T-TOWEL-TL"}),
        ("I like the teal waffle cotton towel from Orrinwade best.", {"T-TOWEL-TL"}),
        # an amount after "a" said of a thing no title has is not the variant's
        (
            "Warm up with the Orrinwade cast iron training kettlebell and a 6 kg sandbag.",
            set(),
        ),
        ("The Orrinwade cast iron kettlebell, a 6 kg one, is my favourite.", {"T-BELL-6"}),
        # ... unless it holds the product: an amount we do not sell is no variant of ours
        ("Orrinwade also sell the sphagnum potting peat in a 20 kg sack.", set()),
        ("Orrinwade sphagnum potting peat in a 10 kg bag is enough.", {"T-PEAT-10"}),
        # two variants named in one name
        (
            "Orrinwade Waffle Cotton Bath Towels in Teal and Ochre look good side by side.",
            {"T-TOWEL-TL", "T-TOWEL-OC"},
        ),
        # a second size said alone in another clause of the sentence
        (
            "Get Orrinwade's woven edging tape in 8 mm for the hems, and in 12 mm for the binding.",
            {"T-TAPE-8", "T-TAPE-12"},
        ),
        (
            "We fitted the Orrinwade galvanised towel rail in 1 m in the cloakroom, and the"
            " 3 m one in the laundry.",
            {"T-RAIL-1", "T-RAIL-3"},
        ),
    ],
)
def test_round_35(text, skus):
    assert named(text) == skus
