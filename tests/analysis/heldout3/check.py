"""Consistency checks for held-out set 3 (data only; runs no project code).

Usage: python3 check.py
"""

import collections
import json
import os
import re
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
errors = []


def norm(s):
    return re.sub(r"\s+", " ", s.lower().replace("-", " ")).strip()


def has_phrase(text, term):
    return (
        re.search(r"(?<![a-z0-9])" + re.escape(norm(term)) + r"(?![a-z0-9])", norm(text))
        is not None
    )


def gtin_ok(g):
    if not re.fullmatch(r"\d{13}", g):
        return False
    s = sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(g[:12]))
    return (10 - s % 10) % 10 == int(g[12])


m = json.loads(Path(HERE, "mentions.json").read_text())
all_gtins = {}
n_ans = n_prod = 0
per_sku_pos = collections.Counter()
ids = set()
for shop in m["shops"]:
    skus = {p["sku"]: p for p in shop["products"]}
    n_prod += len(skus)
    assert len(skus) == len(shop["products"]), "duplicate sku in " + shop["brand"]
    for p in shop["products"]:
        if not gtin_ok(p["gtin"]):
            errors.append("bad gtin " + p["sku"])
        if p["gtin"] in all_gtins:
            errors.append("duplicate gtin " + p["gtin"])
        all_gtins[p["gtin"]] = (shop["brand"], p["sku"])
    for a in shop["answers"]:
        n_ans += 1
        if a["id"] in ids:
            errors.append("duplicate answer id " + a["id"])
        ids.add(a["id"])
        for key in ("id", "kind", "query", "mentions", "text"):
            if key not in a:
                errors.append(a.get("id", "?") + " lacks " + key)
        for s in a["mentions"]:
            if s not in skus:
                errors.append(a["id"] + ": unknown sku " + s)
            per_sku_pos[s] += 1
        for g in re.findall(r"\b\d{13}\b", a["text"]):
            owner = all_gtins.get(g)
            if owner is None or owner[0] != shop["brand"] or owner[1] not in a["mentions"]:
                errors.append(a["id"] + ": quoted gtin " + g + " is not a labelled product's")
        # an exact title (normalised) in the text must be labelled
        for p in shop["products"]:
            if norm(p["title"]) in norm(a["text"]) and p["sku"] not in a["mentions"]:
                errors.append(
                    a["id"] + ": exact title of " + p["sku"] + " present but not labelled"
                )
    for s in skus:
        if per_sku_pos[s] == 0:
            errors.append("sku never labelled positive: " + s)

k = json.loads(Path(HERE, "keywords.json").read_text())
by_cat = collections.defaultdict(list)
for p in k["products"]:
    by_cat[p["category"]].append(p)
assert set(by_cat) == set(k["categories"]), "categories differ"
eligible = 0
for cat, terms in k["categories"].items():
    titles = [p["title"] for p in by_cat[cat]]
    for t in terms:
        n = sum(has_phrase(x, t) for x in titles)
        if not n * 2 > len(titles):
            errors.append(f"{cat}: term {t!r} used by {n} of {len(titles)} titles")
for p in k["products"]:
    common = {norm(t) for t in k["categories"][p["category"]]}
    acc = {norm(s) for g in p["acceptable"] for s in g}
    for s in acc:
        if has_phrase(p["title"], s):
            errors.append(p["sku"] + f": acceptable {s!r} already in title")
    for w in p["wrong"]:
        if norm(w) in acc:
            errors.append(p["sku"] + f": wrong {w!r} also acceptable")
    lacks = [t for t in common if not has_phrase(p["title"], t)]
    is_elig = bool(lacks) and any(norm(s) in common for g in p["acceptable"] for s in g)
    eligible += is_elig
    # every acceptable term should appear in some title of the category
    for g in p["acceptable"]:
        if not any(has_phrase(q["title"], s) for s in g for q in by_cat[p["category"]]):
            errors.append(p["sku"] + f": acceptable group {g!r} used by no title of its category")

print(
    "shops",
    len(m["shops"]),
    "products",
    n_prod,
    "answers",
    n_ans,
    "positive answers",
    sum(1 for s in m["shops"] for a in s["answers"] if a["mentions"]),
)
print(
    "categories", len(k["categories"]), "keyword products", len(k["products"]), "eligible", eligible
)
print("kinds", dict(collections.Counter(a["kind"] for s in m["shops"] for a in s["answers"])))
print("errors", len(errors))
for e in errors:
    print("  ", e)
raise SystemExit(1 if errors else 0)
