"""Unit rules of round 49 (issue 30), from heldout80's misses (other brands and words here):
a record of a product's fields with keys in capitals ("- Brand: <brand>" / "- Model: ..." /
"- Colour: ...") is read as one sentence, like the lower-case records of round 36."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("R-MAT-OL", "Rubber Potting Mat 60 cm, Olive"),
    Product("R-MAT-RU", "Rubber Potting Mat 60 cm, Rust"),
    Product("R-SIEVE", "Riddle Sieve, 6 mm Mesh"),
]


def named(text, brand="Quillmead"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        (
            "- Brand: Quillmead\n- Model: rubber potting mat\n- Colour to choose: **Rust**, it "
            "hides soil.",
            {"R-MAT-RU"},
        ),
        ("- Brand: Quillmead\n- Model: rubber potting mat\n- Size: 60 cm", set()),
        ("- Pros: Quillmead is cheap\n- Cons: rust on the rivets", set()),
    ],
)
def test_round_49(text, skus):
    assert named(text) == skus
