"""Unit rules of round 51 (issue 30), from heldout83's and heldout84's misses (other brands and
words here): "the <variant> one" beside the variant the brand leads into names it too; a word
after "then" is a verb ("..., then rinse" names no "Rinse Tray"); our exact title followed by
an earlier edition's mark is another product ("<title> Mk I", "<title>, 2019 edition, which
they stopped making"), though a dated edition in a citation is ours."""

import pytest

from commerce_api.analysis.visibility_claims import variant_of_led
from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("J-CASE-OC", "Padded Lute Case, Ochre"),
    Product("J-CASE-SL", "Padded Lute Case, Slate"),
    Product("J-TRAY", "Deep Soak Tray for A3 Sheets"),
    Product("J-INK", "Oak Gall Writing Ink"),
    Product("J-PRESS", "Cast Iron Flower Press with Wing Nuts"),
]


def named(text, brand="Wendlecote"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        (
            "I have the Wendlecote lute case in ochre and my teacher has the slate one.",
            {"J-CASE-OC", "J-CASE-SL"},
        ),
        ("Tone each sheet in Wendlecote toner, then soak.", set()),
        ("My Wendlecote Cast Iron Flower Press with Wing Nuts Mk I still works.", set()),
        (
            "I still use a Cast Iron Flower Press with Wing Nuts, 2019 edition, which they "
            "stopped making.",
            set(),
        ),
        ("See Wendlecote, *Cast Iron Flower Press with Wing Nuts*, 2027 edition.", {"J-PRESS"}),
    ],
)
def test_round_51(text, skus):
    assert named(text) == skus


def test_a_variant_whose_own_words_are_not_said_names_nothing():
    # (a product found by other words than its variant's: no error, no credit)
    words = {"A": frozenset({"paint", "sap", "green"}), "B": frozenset({"paint", "mar", "black"})}
    variants = {"sap", "green", "mar", "black"}
    assert not variant_of_led("B", {"A"}, words, lambda sku: "paint", variants, ["paint", "it"])
