"""``llm_visibility_score``: how visible a product is in AI assistants' answers.

For each SKU, each query (given, or built from its title and category) is put to each
assistant (a model of the OpenAI-compatible provider, ``llm.py``). The answer is cut into
units (the items of a list answer, the sentences of prose); a unit names the product when
it carries its GTIN or SKU, or, said of the shop's brand, the words of its title that
single it out in the catalogue (``visibility_match``): the brand alone credits no SKU and
is counted per assistant as ``brand_mentions``. The rank of the first list item that names
it is its ``position``.

The score follows the position-adjusted word count of the GEO paper (Aggarwal et al.,
"GEO: Generative Engine Optimization", KDD 2024): an answer's visibility for the product is
``sum(|u| * exp(-pos(u) / n) for mentioning units u) / sum(|u| for all units)``, with
``|u|`` the unit's words, ``pos(u)`` its 0-based index and ``n`` the number of units; the
SKU's ``score`` is 100 x its mean over the SKU's answers, the job's ``score`` 100 x the mean
over all answers.
"""

import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

from ..auth.models import Tenant
from ..products.models import Product
from .listing_title import key, strip_promotional
from .llm import ChatClient
from .visibility_match import CatalogueMatcher
from .visibility_match import Product as Known

DEFAULT_QUERY_COUNT = 3
MAX_CALLS = 2000  # questions per job: skus x queries x assistants
EXCERPT_CHARS = 240
CATALOGUE_LIMIT = 50_000  # products a job tells apart (the most recently updated first)
# Words of a shop's name that say nothing about the brand.
_GENERIC_NAME_WORDS = frozenset(
    ["store", "shop", "inc", "ltd", "llc", "gmbh", "co", "company", "official", "the"]
)


# Queries --------------------------------------------------------------------------------


def product_phrase(title: str | None) -> str:
    """What the product is, from its title: the part before the first comma or dash."""
    clean = strip_promotional(title)
    head = re.split(r"\s[-\u2013|]\s|,|\(", clean, maxsplit=1)[0].strip()
    return (head or clean or (title or "").strip()).lower()


def build_queries(title: str | None, category: str | None) -> list[str]:
    """Three shopper questions about the product's kind, asking for ranked lists."""
    thing = product_phrase(title)
    queries = [
        f"What is the best {thing} to buy? Give a numbered list of specific products "
        "with brand and product name.",
        f"Which {thing} would you recommend? Rank your top picks.",
    ]
    if category:
        queries.append(
            f"I am shopping for {category.strip().lower()} products: which {thing} should I "
            "choose? List specific products."
        )
    else:
        queries.append(f"Which brands make the best {thing}? List specific products.")
    return queries


def fill_query(query: str, title: str | None, category: str | None) -> str:
    """A given query with ``{title}`` and ``{category}`` filled in."""
    return query.replace("{title}", title or "").replace("{category}", category or "")


# Answers --------------------------------------------------------------------------------


def _excerpt(text):
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "\u2026"


def detect_mention(answer: str, matcher: CatalogueMatcher, sku: str) -> dict[str, Any]:
    """``{mentioned, position, excerpt, match, visibility, brand_mentioned}`` of the product
    ``sku`` in ``answer`` (``matcher``: a ``CatalogueMatcher``)."""
    units, found, brand_mentioned = matcher.read(answer)
    hits = [(i, named[sku]) for i, named in enumerate(found) if sku in named]
    if not hits:
        return {
            "mentioned": False,
            "position": None,
            "excerpt": None,
            "match": None,
            "visibility": 0.0,
            "brand_mentioned": brand_mentioned,
        }
    ranks = [units[i].rank for i, _ in hits if units[i].rank is not None]
    first, how = hits[0]
    texts = [unit.text for unit in units]
    return {
        "mentioned": True,
        "position": ranks[0] if ranks else None,
        "excerpt": _excerpt(units[first].text),
        "match": how,
        "visibility": round(position_adjusted_visibility(texts, [i for i, _ in hits]), 4),
        "brand_mentioned": brand_mentioned,
    }


def position_adjusted_visibility(texts: Sequence[str], mentioning: Iterable[int]) -> float:
    """The GEO paper's position-adjusted word count of the mentioning units (indexes into
    ``texts``, the answer's units in order), in [0, 1]."""
    sizes = [len(text.split()) for text in texts]
    total = sum(sizes)
    if not total:
        return 0.0
    count = len(texts)
    return sum(sizes[i] * math.exp(-i / count) for i in set(mentioning)) / total


# The job --------------------------------------------------------------------------------


def brand_of(tenant_id: str, brand: str | None = None) -> str | None:
    """The brand words to look for: ``brand`` when given, else the shop's name without
    words such as "store" or "shop" (None when nothing is left)."""
    if brand:
        return brand
    tenant = Tenant.get_or_none(Tenant.id == tenant_id)
    words = [
        w for w in (tenant.name if tenant else "").split() if key(w) not in _GENERIC_NAME_WORDS
    ]
    return " ".join(words) or None


def catalogue(tenant_id: str, products: Iterable[Product]) -> list[Known]:
    """The tenant's products a mention must tell apart: ``products`` and the others (not
    archived, the most recently updated first, up to ``CATALOGUE_LIMIT``)."""
    known = {p.sku: Known(p.sku, p.title, p.gtin) for p in products}
    rows = (
        Product.select(Product.sku, Product.title, Product.gtin)
        .where((Product.tenant == tenant_id) & (Product.status != "archived"))
        .order_by(Product.updated_at.desc(), Product.id.desc())
        .limit(CATALOGUE_LIMIT)
        .tuples()
    )
    for sku, title, gtin in rows.iterator():
        known.setdefault(sku, Known(sku, title, gtin))
    return list(known.values())


def plan_questions(
    products: Iterable[Product], queries: Sequence[str] | None = None
) -> list[tuple[str, str]]:
    """``[(sku, query)]`` for each product: the given queries or built ones."""
    plan = []
    for product in products:
        asked = (
            [fill_query(q, product.title, product.category) for q in queries]
            if queries
            else build_queries(product.title, product.category)
        )
        plan.extend((product.sku, query) for query in asked)
    return plan


def _mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def _summary(rows):
    positions = [row["position"] for row in rows if row["position"] is not None]
    average_position = _mean(positions)
    return {
        "score": round(100 * (_mean(row["visibility"] for row in rows) or 0.0), 1),
        "mention_rate": round(_mean(row["mentioned"] for row in rows) or 0.0, 4),
        "average_position": round(average_position, 2) if average_position else None,
    }


def summarize(
    skus: Sequence[str], assistants: Sequence[str], rows: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The result of DESIGN 8 from ``rows`` (one per sku, query and assistant)."""
    overall = _summary(rows)
    by_assistant = []
    for assistant in assistants:
        mine = [row for row in rows if row["assistant"] == assistant]
        # answers that name the brand but not the SKU asked about: never credited to it
        brand_only = sum(row["brand_mentioned"] and not row["mentioned"] for row in mine)
        by_assistant.append(
            {"assistant": assistant, **_summary(mine), "brand_mentions": brand_only}
        )
    by_sku = []
    for sku in skus:
        mine = [row for row in rows if row["sku"] == sku]
        summary = _summary(mine)
        by_sku.append(
            {
                "sku": sku,
                "score": summary["score"],
                "mention_rate": summary["mention_rate"],
                "average_position": summary["average_position"],
                "mentions": [{k: v for k, v in row.items() if k != "sku"} for row in mine],
            }
        )
    return {**overall, "answer_count": len(rows), "by_assistant": by_assistant, "by_sku": by_sku}


def score_visibility(
    tenant_id: str,
    params: dict[str, Any],
    client: ChatClient,
    models: Sequence[str],
    deadline: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    heartbeat: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Run ``llm_visibility_score``: ask, detect, score. ``client`` is a ``ChatClient``;
    ``progress(done, total)`` and ``heartbeat()`` are called from this thread only."""
    assistants = list(dict.fromkeys(params.get("assistants") or models))
    skus = list(dict.fromkeys(params["skus"]))
    found = {
        p.sku: p
        for p in Product.select().where((Product.tenant == tenant_id) & Product.sku.in_(skus))
    }
    products = [found[sku] for sku in skus if sku in found]
    brand = brand_of(tenant_id, params.get("brand"))
    matcher = CatalogueMatcher(catalogue(tenant_id, products), brand)
    calls = [
        (sku, query, assistant)
        for sku, query in plan_questions(products, params.get("queries"))
        for assistant in assistants
    ]
    answers = [None] * len(calls)
    total = len(calls)
    if progress:
        progress(0, total)
    with ThreadPoolExecutor(max_workers=client.settings.concurrency) as pool:
        pending = {
            pool.submit(client.complete, assistant, query, deadline): index
            for index, (_, query, assistant) in enumerate(calls)
        }
        try:
            done_count = 0
            while pending:
                finished, _ = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                for future in finished:
                    answers[pending.pop(future)] = future.result()  # raises LlmError
                    done_count += 1
                if heartbeat:
                    heartbeat()
                if progress and finished:
                    progress(done_count, total)
        finally:
            for future in pending:
                future.cancel()
    rows = []
    for (sku, query, assistant), answer in zip(calls, answers, strict=True):
        found_in = detect_mention(answer, matcher, sku)
        rows.append({"sku": sku, "assistant": assistant, "query": query, **found_in})
    result = summarize([p.sku for p in products], assistants, rows)
    result["brand"] = brand
    result["skus_not_found"] = [sku for sku in skus if sku not in found]
    return result


def job_deadline(timeout_seconds: float) -> float:
    """A monotonic deadline a little before the job's time-out (room to write the result)."""
    margin = min(30.0, timeout_seconds * 0.1)
    return time.monotonic() + timeout_seconds - margin
