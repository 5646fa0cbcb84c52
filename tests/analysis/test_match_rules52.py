"""Unit rules of round 52 (issue 30), from heldout85's misses (other brands and words here):
the title's material anywhere before its kind ends a name when a variant of ours is said
("<brand>'s size 2 wool in slate"), and before a packaging word too ("<brand> wool skeins,
the Slate and the Ochre"); the kind before a word for people says no product ("sells to rope
makers"), nor does what the brand grows or makes itself ("grows its own hemp")."""

import pytest

from commerce_api.analysis.visibility_match import CatalogueMatcher, Product

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

SHOP = [
    Product("K-YARN-SL", "Wool Darning Yarn Size 2 on Skein, Slate"),
    Product("K-YARN-OC", "Wool Darning Yarn Size 2 on Skein, Ochre"),
    Product("K-ROPE", "Twisted Hemp Rope, 20 m"),
    Product("K-NEEDLE", "Bent Tip Darning Needles, Pack of 5"),
]


def named(text, brand="Marrowby"):
    _, found, _ = CatalogueMatcher(SHOP, brand).read(text)
    return {sku for unit in found for sku in unit}


@pytest.mark.parametrize(
    ("text", "skus"),
    [
        ("Marrowby's size 2 wool in slate looks good on grey socks.", {"K-YARN-SL"}),
        (
            "Buy both Marrowby wool skeins, the Slate and the Ochre.",
            {"K-YARN-SL", "K-YARN-OC"},
        ),
        ("Marrowby grows its own hemp in Kent and sells to rope makers.", set()),
    ],
)
def test_round_52(text, skus):
    assert named(text) == skus
