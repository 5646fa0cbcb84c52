"""``llm_visibility_score``: how visible a product is in AI assistants' answers.

For each SKU, each query (given, or built from its title and category) is put to each
assistant (a model of the OpenAI-compatible provider, ``llm.py``). The answer is cut into
units (the items of a list answer, the sentences of prose); a unit mentions the product
when it carries its GTIN, its brand, or most of its title's words (fuzzy: plurals and
near spellings count). The rank of the first list item that mentions it is its
``position``.

The score follows the position-adjusted word count of the GEO paper (Aggarwal et al.,
"GEO: Generative Engine Optimization", KDD 2024): an answer's visibility for the product is
``sum(|u| * exp(-pos(u) / n) for mentioning units u) / sum(|u| for all units)``, with
``|u|`` the unit's words, ``pos(u)`` its 0-based index and ``n`` the number of units; the
SKU's ``score`` is 100 x its mean over the SKU's answers, the job's ``score`` 100 x the mean
over all answers.
"""

import difflib
import math
import re
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from ..auth.models import Tenant
from ..products.models import Product
from .listing_title import (
    PROMOTIONAL_WORDS,
    STOPWORDS,
    has_letter,
    key,
    stem,
    strip_promotional,
)

DEFAULT_QUERY_COUNT = 3
MAX_CALLS = 2000  # questions per job: skus x queries x assistants
EXCERPT_CHARS = 240
TITLE_COVERAGE = 0.75  # share of the title's words a unit must carry to name the product
TITLE_MIN_WORDS = 3  # ... and at least this many of them
FUZZY_RATIO = 0.85  # difflib ratio for two words of 5+ letters to count as the same
# Words of a shop's name that say nothing about the brand.
_GENERIC_NAME_WORDS = frozenset(
    ["store", "shop", "inc", "ltd", "llc", "gmbh", "co", "company", "official", "the"]
)

_NOT_TITLE_WORDS = STOPWORDS | PROMOTIONAL_WORDS
_NUMBERED = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*)?\s*(\d{1,3})[.)]\s+(.*\S)")
_BULLET = re.compile(r"^(\s*)[-*\u2022+]\s+(.*\S)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DIGIT_RUN = re.compile(r"\d[\d \-]{6,}\d")


# Queries --------------------------------------------------------------------------------


def product_phrase(title):
    """What the product is, from its title: the part before the first comma or dash."""
    clean = strip_promotional(title)
    head = re.split(r"\s[-\u2013|]\s|,|\(", clean, maxsplit=1)[0].strip()
    return (head or clean or (title or "").strip()).lower()


def build_queries(title, category):
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


def fill_query(query, title, category):
    """A given query with ``{title}`` and ``{category}`` filled in."""
    return query.replace("{title}", title or "").replace("{category}", category or "")


# Answers --------------------------------------------------------------------------------


def answer_units(answer):
    """``[(text, rank)]``: list items (rank 1, 2, ...) and prose sentences (rank None)."""
    lines = (answer or "").splitlines()
    numbered = any(_NUMBERED.match(line) for line in lines)
    bullet_indents = [len(m.group(1)) for m in map(_BULLET.match, lines) if m]
    base_indent = min(bullet_indents) if bullet_indents else 0
    units, current, rank = [], None, 0
    for line in lines:
        if not line.strip():
            continue
        if numbered:
            match = _NUMBERED.match(line)
            item = match.group(2) if match else None
        else:
            match = _BULLET.match(line)
            item = match.group(2) if match and len(match.group(1)) <= base_indent + 1 else None
        if item is not None:
            rank += 1
            units.append([item, rank])
            current = len(units) - 1
            continue
        if current is not None and (line[:1].isspace() or _BULLET.match(line)):
            nested = _BULLET.match(line)
            units[current][0] += " " + (nested.group(2) if nested else line.strip())
            continue
        current = None
        units.extend([sentence, None] for sentence in _SENTENCE_END.split(line.strip()) if sentence)
    return [(text, rank) for text, rank in units]


def _significant(text):
    words = []
    for token in (text or "").split():
        word = key(token)
        if len(word) >= 3 and has_letter(word) and word not in _NOT_TITLE_WORDS | set(words):
            words.append(word)
    return words


class ProductMatcher:
    """Finds a product in text by GTIN, brand words or most of its title's words."""

    def __init__(self, title, brand=None, gtin=None):
        self.title_words = _significant(title)
        self.brand_words = [key(w) for w in (brand or "").split() if key(w)]
        self.gtin = (gtin or "").strip().lstrip("0")

    def match(self, text):
        """``"gtin"``, ``"brand"``, ``"title"`` or None."""
        if self.gtin and any(
            re.sub(r"\D", "", run).lstrip("0") == self.gtin for run in _DIGIT_RUN.findall(text)
        ):
            return "gtin"
        keys = [key(t) for t in text.split()]
        keys = [k for k in keys if k]
        if self.brand_words and _contains_phrase(keys, self.brand_words):
            return "brand"
        if len(self.title_words) >= TITLE_MIN_WORDS:
            found = sum(_word_in(word, keys) for word in self.title_words)
            if found >= TITLE_MIN_WORDS and found / len(self.title_words) >= TITLE_COVERAGE:
                return "title"
        return None


def _contains_phrase(keys, phrase):
    width = len(phrase)
    return any(keys[i : i + width] == phrase for i in range(len(keys) - width + 1))


def _word_in(word, keys):
    folded = stem(word)
    for candidate in keys:
        if candidate == word or stem(candidate) == folded:
            return True
        if (
            len(word) >= 5
            and abs(len(candidate) - len(word)) <= 2
            and difflib.SequenceMatcher(None, word, candidate).ratio() >= FUZZY_RATIO
        ):
            return True
    return False


def detect_mention(answer, matcher):
    """``{mentioned, position, excerpt, match, visibility}`` of the product in ``answer``."""
    units = answer_units(answer)
    hits = [(i, matcher.match(text)) for i, (text, _) in enumerate(units)]
    hits = [(i, how) for i, how in hits if how]
    if not hits:
        return {
            "mentioned": False,
            "position": None,
            "excerpt": None,
            "match": None,
            "visibility": 0.0,
        }
    ranks = [units[i][1] for i, _ in hits if units[i][1] is not None]
    first, how = hits[0]
    excerpt = units[first][0]
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = excerpt[: EXCERPT_CHARS - 1].rstrip() + "\u2026"
    return {
        "mentioned": True,
        "position": ranks[0] if ranks else None,
        "excerpt": excerpt,
        "match": how,
        "visibility": round(position_adjusted_visibility(units, [i for i, _ in hits]), 4),
    }


def position_adjusted_visibility(units, mentioning):
    """The GEO paper's position-adjusted word count of the mentioning units, in [0, 1]."""
    sizes = [len(text.split()) for text, _ in units]
    total = sum(sizes)
    if not total:
        return 0.0
    count = len(units)
    return sum(sizes[i] * math.exp(-i / count) for i in set(mentioning)) / total


# The job --------------------------------------------------------------------------------


def brand_of(tenant_id, brand=None):
    """The brand words to look for: ``brand`` when given, else the shop's name without
    words such as "store" or "shop" (None when nothing is left)."""
    if brand:
        return brand
    tenant = Tenant.get_or_none(Tenant.id == tenant_id)
    words = [
        w for w in (tenant.name if tenant else "").split() if key(w) not in _GENERIC_NAME_WORDS
    ]
    return " ".join(words) or None


def plan_questions(products, queries=None):
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


def summarize(skus, assistants, rows):
    """The result of DESIGN 8 from ``rows`` (one per sku, query and assistant)."""
    overall = _summary(rows)
    by_assistant = []
    for assistant in assistants:
        mine = [row for row in rows if row["assistant"] == assistant]
        by_assistant.append({"assistant": assistant, **_summary(mine)})
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
    tenant_id, params, client, models, deadline=None, progress=None, heartbeat=None
):
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
    matchers = {p.sku: ProductMatcher(p.title, brand, p.gtin) for p in products}
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
        found_in = detect_mention(answer, matchers[sku])
        rows.append({"sku": sku, "assistant": assistant, "query": query, **found_in})
    result = summarize([p.sku for p in products], assistants, rows)
    result["brand"] = brand
    result["skus_not_found"] = [sku for sku in skus if sku not in found]
    return result


def job_deadline(timeout_seconds):
    """A monotonic deadline a little before the job's time-out (room to write the result)."""
    margin = min(30.0, timeout_seconds * 0.1)
    return time.monotonic() + timeout_seconds - margin
