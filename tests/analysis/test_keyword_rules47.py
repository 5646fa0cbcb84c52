"""Round 47 of issue 30 (from heldout76's misses and wrong suggestion; other products here):
a description that says the product is one of the category's kind ("This sap bucket has ...",
"The pail is a sap bucket with ...", "Sold to sugarhouses as a sap bucket") is said of the
product, not of a thing it serves ("fits into a sap bucket"); an earlier mark of the product
("The Mk I had ...", "the original one had ...") is another product."""

import pytest

from tests.analysis.test_keyword_rules12 import terms

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

BUCKETS = [
    ("Sap buckets", "Sap Bucket with Drip Spout, 10 L"),
    ("Sap buckets", "Sap Bucket, Hinged Lid, Galvanised"),
    ("Sap buckets", "Galvanised Sap Bucket, Drip Spout"),
    ("Sap buckets", "Hinged Lid Sap Bucket, 16 L"),
    ("Sap buckets", "Sap Bucket, Hinged Lid, Drip Spout"),
    ("Sap buckets", "Sap Bucket with Drip Spout and Hinged Lid, Mk II"),
    ("Sap buckets", "Maple Pail 12 L"),
]


@pytest.mark.parametrize(
    "title, description, expected",
    [
        ("Maple Pail 12 L", "Sold to sugarhouses as a sap bucket.", ["sap bucket"]),
        ("Maple Pail 12 L", "Works as a sap bucket on small maples.", ["sap bucket"]),
        ("Maple Pail 12 L", "It fits into a sap bucket to keep rain out.", []),
        ("Maple Pail 12 L", "This sap bucket has a hinged lid.", ["hinged lid", "sap bucket"]),
        (
            "Maple Pail 12 L",
            "The pail is a sap bucket with a drip spout.",
            ["drip spout", "sap bucket"],
        ),
        ("Sap Bucket, Drip Spout, Mk II", "The Mk I had a hinged lid; this one is open.", []),
        ("Sap Bucket, Drip Spout, Mk II", "The original one had a hinged lid.", []),
        ("Sap Bucket, Drip Spout, Mk II", "It has a hinged lid.", ["hinged lid"]),
    ],
)
def test_what_the_product_is_and_its_earlier_marks(title, description, expected):
    assert sorted(terms(title, description, BUCKETS)) == expected
