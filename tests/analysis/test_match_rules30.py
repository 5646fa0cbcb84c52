"""Unit rules of rounds 30 and 31 (issue 30), from heldout38's to heldout41's misses (other
brands and words here): storage and frequency units, a pack of a title's count, a kind with
a size among products that only use its word, another value of any part after a comma, the
reader's own things, a product the brand might make or does not make, a kind clipped (round
30); a number of years or kilometres, "one" as a number, a variant's word said of another
thing, the larger or smaller of two variants (round 31); a follow-up line or sentence that picks
one of two variants the line before named ("Size: 64 GB"), a comparative before a noun,
another part closed by a verb (round 33); "symmetric" is no misspelt "asymmetric", a word
a title has after "for" ends no noun phrase of ours, number words are counts, hashtags in
CamelCase (round 34)."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("W-DRIVE-64", "USB Flash Drive for Field Recorders, 64 GB"),
    Product("W-DRIVE-128", "USB Flash Drive for Field Recorders, 128 GB"),
    Product("W-RADIO-27", "Handheld Radio Module 27 MHz"),
    Product("W-RADIO-49", "Handheld Radio Module 49 MHz"),
    Product("W-FILM-25", "Anti-Glare Screen Film, 25 Sheets"),
    Product("W-FILM-50", "Anti-Glare Screen Film, 50 Sheets"),
    Product("W-CORD-2", "Braided Lanyard Cord 2 mm, 20 m"),
    Product("W-CORD-4", "Braided Lanyard Cord 4 mm, 20 m"),
    Product("W-CUTTER", "Lanyard Cord Cutter, Pistol Grip"),
    Product("W-STAND", "Tripod Stand, Carbon, 1.6 m"),
    Product("W-BRACKET", "Handlebar Phone Bracket"),
    Product("W-THERMO", "Probe Thermometer with Alarm"),
    Product("W-GLOVES", "Fingerless Rowing Gloves"),
    Product("W-PEGS-10", "Bamboo Tent Pegs, Pack of 10"),
    Product("W-PEGS-20", "Bamboo Tent Pegs, Pack of 20"),
    Product("W-FLAG-OC", "Nylon Marker Flag 60 cm, Oatmeal"),
    Product("W-FLAG-PL", "Nylon Marker Flag 60 cm, Plum"),
    Product("W-ROPE-5", "Towing Rope 5 m"),
    Product("W-ROPE-8", "Towing Rope 8 m"),
    Product("W-HOOD", "Lens Hood for Trail Cameras"),
    Product("W-KEEL", "Asymmetric Keel Board 90 cm"),
    Product("W-BRUSH", "Boot Brush for Muddy Boots"),
    Product("W-REEL", "Cable Reel with Two Sockets"),
]


def named(text, brand="Wendlecroft"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # storage and frequency units are sizes that pick a variant
        ("The 64 GB Wendlecroft flash drive holds a week of recordings.", {"W-DRIVE-64"}),
        (
            "Wendlecroft make the field-recorder flash drive in 64 GB and 128 GB; I use the"
            " 128 GB on tour and the 64 GB at home.",
            {"W-DRIVE-64", "W-DRIVE-128"},
        ),
        # several amounts, and the brand's clause says none of them
        (
            "We carry two Wendlecroft handheld radio modules, a 27 MHz and a 49 MHz, for"
            " the two fields.",
            {"W-RADIO-27", "W-RADIO-49"},
        ),
        # a pack of the title's own count
        ("For one phone, the Wendlecroft screen film pack of 25 sheets is plenty.", {"W-FILM-25"}),
        (
            "Wendlecroft sell their anti-glare screen film in packs of 25 and of 50 sheets.",
            {"W-FILM-25", "W-FILM-50"},
        ),
        ("The Wendlecroft screen film pack of 10 sheets is sold out.", set()),
        # a kind with a size: a cutter of cords is no cord
        ("For keyrings, the 2 mm Wendlecroft cords knot the neatest.", {"W-CORD-2"}),
        # another value of any part after a comma
        ("The Wendlecroft Tripod Stand, Aluminium, 1.6 m is lighter.", set()),
        ("Wendlecroft also make a Lanyard Cord Cutter, Heated Blade, which seals ends.", set()),
        ("The Wendlecroft Lanyard Cord Cutter, Pistol Grip, cuts cleanly.", {"W-CUTTER"}),
        ("The Wendlecroft Tripod Stand, Carbon, 1.6 m is stiff.", {"W-STAND"}),
        # the reader's own things
        ("On a Wendlecroft ride day the guide fits a phone on your handlebar.", set()),
        ("Wendlecroft's handlebar phone bracket never rattles.", {"W-BRACKET"}),
        # what the brand holds
        ("Wendlecroft run rowing clinics where they teach grip with gloves on.", set()),
        ("Wendlecroft's fingerless rowing gloves grip well.", {"W-GLOVES"}),
        # a product the brand might make, or does not make
        ("If Wendlecroft ever make a rowing machine I would buy it; for now, gloves.", set()),
        ("A Wendlecroft cord kit for scouts would be great, but they do not make one.", set()),
        # a kind clipped: "thermo" of "thermometer"
        ("The probe alarm on Wendlecroft's thermo is loud enough.", {"W-THERMO"}),
        ("The probe alarm on Wendlecroft's watch is loud enough.", set()),
        # round 31: a number of other things, or of kilometres, picks no variant
        ("I have used Wendlecroft bamboo tent pegs for 20 years.", set()),
        ("The 20 Wendlecroft bamboo tent pegs came in a cloth bag.", {"W-PEGS-20"}),
        ("The Wendlecroft towing rope has pulled my car 8 km so far.", set()),
        # "one" as a number is no pick; the brand's lens hoods in general
        ("Wendlecroft lens hoods are made in one piece and never crack.", set()),
        # a variant's word said of another thing ("a plum tree")
        ("My Wendlecroft nylon marker flag landed in a plum tree.", set()),
        ("My Wendlecroft nylon marker flag in plum is easy to spot.", {"W-FLAG-PL"}),
        # the larger or smaller of two variants
        ("Take the larger of Wendlecroft's two packs of bamboo tent pegs.", {"W-PEGS-20"}),
        ("For a small car, the shorter of the two Wendlecroft towing ropes will do.", {"W-ROPE-5"}),
        ("The Wendlecroft towing rope is longer than most.", set()),
        # round 33: a comparative before a noun
        ("Wendlecroft make the towing rope in two lengths; get the shorter rope.", {"W-ROPE-5"}),
        # another part closed by a verb
        ("The Wendlecroft Tripod Stand, Alpine Ash is lighter.", set()),
        # round 34: another word, not a misspelling; a word served; a number word
        ("The Wendlecroft Symmetric Keel Board 90 cm is easier to learn on.", set()),
        ("The Wendlecroft Asymmetric Keel Board 90 cm carves well.", {"W-KEEL"}),
        ("Wendlecroft started out selling muddy boots and now makes kit for walkers.", set()),
        ("Wendlecroft cable in two-tone grey is tidy.", set()),
        ("Garage tidy at last #CableReelWithTwoSockets", {"W-REEL"}),
    ],
)
def test_round_30_rules(text, skus):
    assert named(text) == skus


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # round 33: a line or a sentence after the one that named two variants picks one
        (
            "Packing list:\n\nDrive: Wendlecroft USB Flash Drive\nCapacity: 128 GB\n",
            {"W-DRIVE-128"},
        ),
        (
            "Wendlecroft sell the towing rope in two lengths. For a van, take the longer of"
            " the two.",
            {"W-ROPE-8"},
        ),
        ("I would get the Wendlecroft towing rope.\n\nWhich length? The 5 m one.", {"W-ROPE-5"}),
        # ... but not a line about another thing
        ("Drive: Wendlecroft USB Flash Drive\nCamera: a Knotterby with 64 GB inside\n", set()),
        ("Wendlecroft sell the towing rope in two lengths. My van is 5 m long.", set()),
    ],
)
def test_a_follow_up_picks_one_of_two_variants(text, skus):
    assert named(text) == skus
