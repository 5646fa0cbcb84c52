"""Unit rules of round 36 (issue 30), from heldout50's to heldout52's misses (other brands
and words here): a record of "key: value" lines (YAML, a spec block) names one product; a
changed "-ate"/"-ite" ending is another chemical, no misspelling; another value of a title's
last part after the brand and the last words of its first part."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("V-CAPE-RU", "Felted Riding Cape, Russet"),
    Product("V-CAPE-SL", "Felted Riding Cape, Slate"),
    Product("V-BEAD-6", "Glass Seed Beads 6 mm, Tube"),
    Product("V-BEAD-8", "Glass Seed Beads 8 mm, Tube"),
    Product("V-KIT", "Sulfite Test Strips"),
    Product("V-TIMER", "Kessler Sand Timer, Five Minutes"),
]


def named(text, brand="Pellowmere"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        # a record of fields, fenced or not, names the product its values name
        ("```yaml\nmaker: Pellowmere\nitem: Felted Riding Cape\ncolour: slate\n```", {"V-CAPE-SL"}),
        ("brand: Pellowmere\nproduct: Glass Seed Beads\nsize: 8 mm\n", {"V-BEAD-8"}),
        # ... and a record that names no variant names none
        ("maker: Pellowmere\nitem: Felted Riding Cape\n", set()),
        # one line of a field is no record: a label before a sentence reads as before
        ("Verdict: the Pellowmere riding cape is warm.", set()),
        # "-ate" for "-ite" is another chemical, not a misspelling
        ("Pellowmere also sell Sulfate Test Strips for pools.", set()),
        ("Pellowmere's Sulfite Test Strips are the ones for wine makers.", {"V-KIT"}),
        # another value of the last part after the brand and the first part's last words
        ("The Pellowmere Sand Timer, Three Minutes suits a boiled egg.", set()),
        ("The Pellowmere Kessler Sand Timer, Five Minutes is ours.", {"V-TIMER"}),
    ],
)
def test_round_36(text, skus):
    assert named(text) == skus
