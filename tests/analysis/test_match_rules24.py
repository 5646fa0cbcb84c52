"""Unit rules of rounds 24 to 29 (issue 30), from heldout29's to heldout37's misses (other
brands and words here): piece counts and scales, names in capitals, the brand's lines,
catalogue, places and publications, type names in lower case, options said again,
another value of a title's last part."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("Q-PUZ-750", "Mountain Scene Jigsaw, 750 Pieces"),
    Product("Q-PUZ-1500", "Mountain Scene Jigsaw, 1500 Pieces"),
    Product("Q-NAK-180", "Nakiri Vegetable Knife 180 mm"),
    Product("Q-NAK-240", "Nakiri Vegetable Knife 240 mm"),
    Product("Q-STAND", "Portable Lantern Stand with Two Hooks"),
    Product("Q-JUG-1", "Glass Measuring Jug 1 L with Lid"),
    Product("Q-JUG-2", "Glass Measuring Jug 2 L with Lid"),
    Product("Q-GUARD-T", "Rash Guard Size M, Teal"),
    Product("Q-GUARD-N", "Rash Guard Size M, Navy"),
    Product("Q-STOOL", "Fast-Fold Camp Stool"),
    Product("Q-SHIP-72", "Plank-on-Frame Schooner Kit 1:72"),
    Product("Q-SHIP-96", "Plank-on-Frame Schooner Kit 1:96"),
    Product("Q-PAD", "Garden Kneeling Pad, Thick"),
    Product("Q-GAITER", "Trail Gaiter, Size M"),
    Product("Q-BOARD", "Oiled Walnut Serving Board"),
]


def named(text, brand="Quellbrook"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # round 24: a count of pieces picks a variant; a name in capitals bridged by "at"
        ("The 750-piece Quellbrook Mountain Scene takes a weekend.", {"Q-PUZ-750"}),
        ("- Quellbrook Mountain Scene, 1500 pieces: for the winter", {"Q-PUZ-1500"}),
        ("The Quellbrook Lake at Dawn Jigsaw, 750 Pieces is calmer.", set()),
        # the brand's line ("lanterns") lends no word of our lantern stand
        ("Quellbrook lanterns use a heavy base and the stand folds away.", set()),
        ("Quellbrook's portable lantern stand holds two lamps.", {"Q-STAND"}),
        # a type's name in lower case, with a size of ours
        ("For a small board the 180 mm Quellbrook nakiri is easier.", {"Q-NAK-180"}),
        ("The Quellbrook insulated jug keeps tea warm.", set()),
        # options said again: each variant named
        (
            "Quellbrook's nakiri comes in 180 mm and 240 mm: the 180 mm for herbs, the 240 mm"
            " for squash.",
            {"Q-NAK-180", "Q-NAK-240"},
        ),
        ("Quellbrook's nakiri comes in 180 mm and 240 mm.", set()),
        # round 25: the brand's catalogue as a list
        ("Quellbrook sells jigsaws, lantern stands, camp stools and measuring jugs.", set()),
        # the kind before "Size M"; both variants by their colours
        (
            "Order both Quellbrook rash guards, the teal one and the navy one.",
            {"Q-GUARD-T", "Q-GUARD-N"},
        ),
        # the number of a size is no count of the word before it
        ("For soups the 2 L Quellbrook jug is the right size.", {"Q-JUG-2"}),
        # round 26: the brand's places and publications are no product
        ("Quellbrook's new studio in Leeds has teal walls and a navy rash guard rack.", set()),
        ("Quellbrook's care guide says to oil the walnut serving board monthly.", set()),
        # round 27: the brand as an event's name; a hyphenated title written closed
        ("The Quellbrook Spring Regatta starts at ten; bring a rash guard.", set()),
        ("The Quellbrook Fastfold Camp Stool weighs almost nothing.", {"Q-STOOL"}),
        # round 28: anyone's product; another last part in capitals; scales
        ("At ten you move to a bigger jigsaw, whoever makes the jigsaw, Quellbrook or not.", set()),
        ("Quellbrook also sell a Garden Kneeling Pad, Thin, which rolls up.", set()),
        ("The Quellbrook schooner kit at 1:72 is about 50 cm long.", {"Q-SHIP-72"}),
        # round 29: "in" before an article is no inch; another value of the last part
        (
            "Quellbrook sell the schooner kit in 1:72 and 1:96; I built the 1:72 in the"
            " study and the 1:96 in the hall.",
            {"Q-SHIP-72", "Q-SHIP-96"},
        ),
        ("The Quellbrook Trail Gaiter, Size L fits big boots.", set()),
        ("The Quellbrook Trail Gaiter, Size M fits my boots.", {"Q-GAITER"}),
    ],
)
def test_rounds_24_to_29(text, skus):
    assert named(text) == skus
