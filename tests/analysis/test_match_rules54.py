"""Unit rules of round 54 (issue 30), from heldout89's misses (other brands and words here):
another firm set apart from the brand ("not to be confused with <brand>", "unrelated to
<brand>", "<Other>, not <brand>, sells ...") makes the title words its own; a variant's last
part of three words ("Lead Tin Yellow") sets it apart as one of two does, so both variants
said one after the other are named."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("N-JUG-LT", "Salt Glaze Cream Jug 500 ml, Lead Tin Yellow"),
    Product("N-JUG-SM", "Salt Glaze Cream Jug 500 ml, Smalt"),
    Product("N-KILN", "Kiln Shelf Prop Set, 12 Pieces"),
]


def named(text, brand="Ostlerby"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        (
            "Ostlerby sell the salt glaze cream jug in smalt and in lead tin yellow.",
            {"N-JUG-LT", "N-JUG-SM"},
        ),
        (
            "Not to be confused with Ostlerby: Ostlerbee Pottery sells a kiln shelf prop set "
            "with 12 pieces.",
            set(),
        ),
        ("Ostlerbee Pottery, not Ostlerby, sells a kiln shelf prop set.", set()),
    ],
)
def test_round_54(text, skus):
    assert named(text) == skus
