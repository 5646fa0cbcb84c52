"""Labelled evaluation sets of the analysis job types, with the accuracy each reaches
(printed; run with ``-s`` to see it) and thresholds that fail when quality regresses.

- keyword suggestions of ``listing_optimize`` over the demo catalogue and 32 more
  products of six categories (``fixtures/eval_keywords.json``);
- mention detection of ``llm_visibility_score`` over assistant answers labelled with the
  SKUs they really name (``fixtures/eval_mentions.json``).

The sentiment set is in ``test_analysis_sentiment.py``.
"""

import json
from pathlib import Path

from commerce_api.analysis.demo_listings import DEMO_LISTINGS
from commerce_api.analysis.listing_keywords import KeywordCorpus, title_terms
from commerce_api.analysis.listing_title import stem
from commerce_api.demo import DEMO_PRODUCTS

FIXTURES = Path(__file__).parent / "fixtures"


# Keyword suggestions ------------------------------------------------------------------


def keyword_catalogue():
    data = json.loads((FIXTURES / "eval_keywords.json").read_text())
    demo = [(sku, title, category) for sku, title, category, _ in DEMO_PRODUCTS]
    demo += [(p["sku"], p["title"], p["category"]) for p in DEMO_LISTINGS]
    products = [
        {
            "sku": sku,
            "title": title,
            "category": category,
            "kind": data["demo_kinds"][sku],
            "materials": data["demo_materials"][sku],
        }
        for sku, title, category in demo
    ]
    return products + data["products"]


def test_keyword_suggestions_are_of_the_same_kind_and_material_and_not_in_the_title():
    products = keyword_catalogue()
    assert len(products) >= 12 + 30 and len({p["category"] for p in products}) >= 5
    corpus = KeywordCorpus((p["category"], p["title"]) for p in products)
    kinds = {stem(p["kind"]) for p in products}
    materials = {stem(m) for p in products for m in p["materials"]}
    total, wrong, covered = 0, [], 0
    for product in products:
        own = {stem(t) for t in title_terms(product["title"])}
        same_category = set()
        for other in products:
            if other is not product and other["category"] == product["category"]:
                same_category |= {stem(t) for t in title_terms(other["title"])}
        suggested = [k["term"] for k in corpus.suggest(product["category"], product["title"])]
        covered += bool(suggested)
        for term in suggested:
            total += 1
            if stem(term) in own:
                wrong.append((product["sku"], term, "already in the title"))
            elif stem(term) not in same_category:
                wrong.append((product["sku"], term, "not from the same category"))
            elif stem(term) in kinds - {stem(product["kind"])}:
                wrong.append((product["sku"], term, "names another kind of product"))
            elif stem(term) in materials - {stem(m) for m in product["materials"]}:
                wrong.append((product["sku"], term, "a material it is not made of"))
    precision = 1 - len(wrong) / total if total else 1.0
    print(
        f"\nkeyword suggestions: {total} over {len(products)} products "
        f"({covered} with suggestions); right {precision:.1%}; wrong: {wrong}"
    )
    # a wrong keyword costs a merchant more than a missing one: none may be wrong (few
    # products here have two neighbours of their kind and material to learn from)
    assert wrong == []
    assert total >= 1
