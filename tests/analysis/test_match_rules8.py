"""Unit rules of round 8 (issue 30), one test per kind of case heldout7 and heldout8 showed
(their misses were read; the cases here use other brands and words): weights and bare
numbers of variants, tables, the reader's own thing, a word another product claims, a type's
name without the kind, short codes, degrees, a clause set against the one before, compounds
written joined in capitals, and a kind in the plural with "one"/"both"."""

import pytest

from commerce_api.analysis.visibility_claims import unclaimed_words
from commerce_api.analysis.visibility_clauses import answer_units
from commerce_api.analysis.visibility_evidence import brand_leads
from commerce_api.analysis.visibility_match import CatalogueMatcher, Product
from commerce_api.analysis.visibility_sizes import numbers_single_out, sizes_of

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("H-BELL-8", "Cast Iron Kettlebell 8 kg"),
    Product("H-BELL-12", "Cast Iron Kettlebell 12 kg"),
    Product("H-BAND-20", "Resistance Band 20 lb"),
    Product("H-BAND-40", "Resistance Band 40 lb"),
    Product("H-TIMER", "Interval Timer with Magnetic Back"),
    Product("H-ROPE", "Speed Rope with Ball Bearings"),
    Product("H-TABLE", "Folding Massage Table 185 x 70 cm"),
    Product("H-LOOP", "Massage Loop for Table Arm"),
    Product("H-GAUGE-OO", "Flexible Track 914 mm - OO Gauge"),
    Product("H-GAUGE-N", "Flexible Track 914 mm - N Gauge"),
    Product("H-ROLLER", "Foam Roller 45 cm"),
    Product("H-TUBE", "Plyo Tube 30 cm"),
    Product("H-CHART", "Sky Chart for Latitude 51° North"),
    Product("H-MESO", "Mesophilic Starter Culture, Pack of 5"),
    Product("H-THERMO", "Thermophilic Starter Culture, Pack of 5"),
    Product("H-PEN", "Flexible-Tip Brush Pens, Set of 4"),
]


def named(text, brand="Hollowby"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("Once 20 lb feels easy, move up to the 40 lb Hollowby resistance band.", {"H-BAND-40"}),
        ("I swing the Hollowby cast iron kettlebell in 8 and in 12.", {"H-BELL-8", "H-BELL-12"}),
        (
            "Get the Hollowby cast iron kettlebell in 8 kg and 12 kg for a full set.",
            {"H-BELL-8", "H-BELL-12"},
        ),
        ("The Hollowby cast iron kettlebell comes in 8 kg and 12 kg.", set()),
        (
            "The Hollowby cast iron kettlebell comes in 8 kg and 12 kg; I own both.",
            {"H-BELL-8", "H-BELL-12"},
        ),
    ],
)
def test_weights_and_bare_numbers_tell_variants_apart_unless_only_offered(text, skus):
    assert named(text) == skus
    assert sizes_of("Band 40 lb")["lb"] == {"40"} and sizes_of("40 pounds") == {"lb": {"40"}}


def test_numbers_single_out_one_or_several_variants():
    eight, twelve = {"kg": {"8"}}, {"kg": {"12"}}
    assert numbers_single_out({"8"}, eight, [twelve], False)
    assert numbers_single_out({"8", "12"}, eight, [twelve], False)
    assert not numbers_single_out({"8", "12"}, eight, [twelve], True)
    assert not numbers_single_out({"5"}, eight, [twelve], False)


def test_a_tables_header_naming_the_brand_heads_its_rows():
    text = (
        "| Level | Hollowby pick |\n|---|---|\n| New | cast iron kettlebell, 8 kg |\n| Old | any |"
    )
    assert [(u.text, u.rank, u.heading) for u in answer_units(text)] == [
        ("Level | Hollowby pick", None, True),
        ("New | cast iron kettlebell, 8 kg | Level | Hollowby pick", 1, False),
        ("Old | any | Level | Hollowby pick", 2, False),
    ]
    assert named(text) == {"H-BELL-8"}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("Hollowby's interval timer sticks to the rack, next to your speed rope.", {"H-TIMER"}),
        ("Hollowby's interval timer and the speed rope came together.", {"H-TIMER", "H-ROPE"}),
        ("Hollowby's folding massage table is steady, and a loop keeps an arm still.", {"H-TABLE"}),
    ],
)
def test_a_product_the_brand_does_not_lead_needs_a_definite_reference_and_its_own_words(text, skus):
    assert named(text) == skus


def test_brand_leads_and_claimed_words():
    titled = {"T": frozenset({"interval", "timer"}), "R": frozenset({"speed", "rope"})}
    keys = ["hollowby", "interval", "timer", "and", "speed", "rope"]
    assert brand_leads(keys, ["hollowby"], titled) == {"T", "R"}
    assert brand_leads(["hollowby", "is", "good"], ["hollowby"], titled) is None
    titles = {"A": frozenset({"a", "b", "c", "x"}), "B": frozenset({"c", "d", "e"})}
    kept = unclaimed_words(
        {"A": frozenset({"a", "b", "c"}), "B": frozenset({"c", "d"})},
        titles,
        ["a", "b", "c", "d"],
        2,
    )
    assert set(kept) == {"A"}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("For a tight hamstring, the 45 cm Hollowby Foam is plenty.", set()),  # a material
        ("Hollowby's flexible track in N suits a shelf.", {"H-GAUGE-N"}),
        ("Hollowby's OO gauge flexible track is in my loft.", {"H-GAUGE-OO"}),
        ("The Hollowby Sky Chart for Latitude 51 Degrees North fits London.", {"H-CHART"}),
        ("Hollowby's Resistance Band 40 lb, not the 20 lb one, is for squats.", {"H-BAND-40"}),
        (
            "HOLLOWBY FLEXIBLE-TIP BRUSHPENS, SET OF 4: GOOD FOR LETTERING ON SMOOTH PAPER.",
            {"H-PEN"},
        ),
        ("Keep both Hollowby cultures: the mesophilic one for cheddar.", {"H-MESO"}),
        ("Hollowby cultures are all fine.", set()),
    ],
)
def test_codes_degrees_contrasts_capitals_and_plural_picks(text, skus):
    assert named(text) == skus


def test_a_types_name_after_the_brand_says_what_the_product_is():
    shop = [Product("E-25", "Plössl Eyepiece 25 mm"), Product("E-10", "Plössl Eyepiece 10 mm")]
    matcher = CatalogueMatcher(shop, "Starwick")
    found = matcher.read("For planets, the 10 mm Starwick Plössl gives about 120x.")[1]
    assert {sku for unit in found for sku in unit} == {"E-10"}
    found = matcher.read("Every Starwick eyepiece is fine; I like the plössl.")[1]
    assert {sku for unit in found for sku in unit} == set()
