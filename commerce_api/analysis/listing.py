"""``listing_optimize``: check listings, score them and propose improvements.

Each product is checked against the marketplace's profile (``listing_profiles``): title
(``listing_title``), description, images, GTIN and category; return and review signals
(``signals``) add issues of our own; keyword suggestions come from the titles of the same
category (``listing_keywords``). The result follows DESIGN section 8:
``{proposals: [{sku, score, issues: [{code, field, severity, message}], proposed_title,
suggestions}]}`` plus ``profile`` and ``skus_not_found``.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..products.models import Product
from .listing_keywords import CORPUS_LIMIT, KeywordCorpus
from .listing_profiles import ListingProfile, profile_for
from .listing_title import propose_title, title_issues
from .signals import return_signals, review_signals

CHUNK = 20  # products per progress step

# Severity of each code unless the profile says otherwise.
DEFAULT_SEVERITY = {
    "TITLE_TOO_SHORT": "warning",
    "TITLE_TOO_LONG": "error",
    "TITLE_ALL_CAPS": "warning",
    "TITLE_PROMOTIONAL": "warning",
    "TITLE_REPEATED_WORD": "warning",
    "DESCRIPTION_MISSING": "error",
    "DESCRIPTION_TOO_SHORT": "warning",
    "IMAGES_MISSING": "error",
    "IMAGES_TOO_FEW": "warning",
    "IMAGE_NOT_HTTPS": "warning",
    "GTIN_MISSING": "warning",
    "CATEGORY_MISSING": "info",
    "SIZE_CHART_SUGGESTED": "warning",
    "DESCRIPTION_MISMATCH": "warning",
    "BOX_CONTENTS_SUGGESTED": "warning",
    "REVIEWS_NEGATIVE": "warning",
    "RETURNS_HIGH_DEFECT": "error",
}
# Points a code takes off the score of 100, by severity (each code counts once).
PENALTY = {"error": 20, "warning": 8, "info": 3}

# Signals: enough evidence before a signal becomes an issue.
MIN_SIGNAL_RETURNS = 2  # returns of the category
MIN_SIGNAL_SHARE = 0.25  # ... making up at least this share of the SKU's returns
MIN_ASPECT_MENTIONS = 3  # reviews mentioning the aspect
NEGATIVE_SCORE = -0.05  # VADER's threshold for a negative compound score
MIN_REVIEWS = 3  # reviews before the average score or rating is judged
LOW_RATING = 2.5  # an average star rating at or below this is negative
MIN_DEFECT_RETURNS = 2  # returns classified defective before their rate is judged
HIGH_DEFECT_RATE = 0.05  # defective returns per unit sold at or above this is an issue


def _issue(profile, code, field, message, **extra):
    severity = profile.severity(code, DEFAULT_SEVERITY[code])
    return {"code": code, "field": field, "severity": severity, "message": message, **extra}


# Checks of the product's own fields ----------------------------------------------------


def field_issues(product: Product, profile: ListingProfile) -> list[dict[str, Any]]:
    """Issues of title, description, images, GTIN and category under ``profile``."""
    issues = [
        _issue(profile, code, "title", message)
        for code, message in title_issues(product.title, profile)
    ]
    description = (product.description or "").strip()
    if not description:
        issues.append(
            _issue(profile, "DESCRIPTION_MISSING", "description", "The product has no description.")
        )
    elif len(description) < profile.description_min:
        issues.append(
            _issue(
                profile,
                "DESCRIPTION_TOO_SHORT",
                "description",
                f"The description has {len(description)} characters; write at least "
                f"{profile.description_min} (materials, size, use, what is in the box).",
            )
        )
    images = list(product.images or [])
    if not images:
        issues.append(_issue(profile, "IMAGES_MISSING", "images", "The product has no images."))
    elif len(images) < profile.images_min:
        issues.append(
            _issue(
                profile,
                "IMAGES_TOO_FEW",
                "images",
                f"The product has {len(images)} image(s); {profile.name} listings should "
                f"have at least {profile.images_min}.",
            )
        )
    for index, url in enumerate(images):
        if urlsplit(str(url)).scheme.lower() != "https":
            issues.append(
                _issue(
                    profile,
                    "IMAGE_NOT_HTTPS",
                    f"images[{index}]",
                    "Marketplaces only show images served over https.",
                )
            )
    if not (product.gtin or "").strip():
        issues.append(_issue(profile, "GTIN_MISSING", "gtin", "The product has no GTIN/EAN/UPC."))
    if not (product.category or "").strip():
        issues.append(
            _issue(
                profile,
                "CATEGORY_MISSING",
                "category",
                "The product has no category: it cannot be compared with similar listings.",
            )
        )
    return issues


# Signals from return_classify and review_sentiment ------------------------------------


def _share(count, total):
    return count / total if total else 0.0


@dataclass(frozen=True)
class _SignalEvidence:
    """A SKU's return categories and review aspects, read for evidence enough to act on."""

    categories: dict[str, int]
    returned: int
    aspects: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, returns: dict[str, Any], reviews: dict[str, Any]) -> "_SignalEvidence":
        categories = returns.get("categories") or {}
        return cls(categories, sum(categories.values()), reviews.get("aspects") or {})

    def returns_of(self, category):
        """The category's returns when they are many enough and a large enough share, else 0."""
        count = self.categories.get(category, 0)
        if count >= MIN_SIGNAL_RETURNS and _share(count, self.returned) >= MIN_SIGNAL_SHARE:
            return count
        return 0

    def negative_aspect(self, aspect):
        """The aspect's review entry when enough reviews mention it negatively, else None."""
        entry = self.aspects.get(aspect) or {}
        score = entry.get("average_score")
        mentions = entry.get("mentions") or 0
        if mentions >= MIN_ASPECT_MENTIONS and score is not None and score <= NEGATIVE_SCORE:
            return entry
        return None


def signal_issues(
    profile: ListingProfile,
    returns: dict[str, Any] | None = None,
    reviews: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Issues of our own from the SKU's return and review signals (``signals``)."""
    returns = returns or {}
    reviews = reviews or {}
    signals = _SignalEvidence.of(returns, reviews)
    issues = _description_issues(profile, signals)
    defect = _high_defect_issue(profile, signals, returns.get("units_sold") or 0)
    if defect:
        issues.append(defect)
    negative = _negative_reviews_issue(profile, signals, reviews)
    if negative:
        issues.append(negative)
    return issues


def _description_issues(profile, signals):
    """Issues the description can answer: size, mismatch with the product, missing parts."""
    issues = []
    size_returns = signals.returns_of("size_fit")
    size_reviews = signals.negative_aspect("size_fit")
    if size_returns or size_reviews:
        issues.append(
            _issue(
                profile,
                "SIZE_CHART_SUGGESTED",
                "description",
                "Buyers get the size wrong: add a size chart and measurements.",
                evidence=_evidence(size_returns, signals.returned, size_reviews),
            )
        )
    mismatch_returns = signals.returns_of("not_as_described")
    mismatch_reviews = signals.negative_aspect("description")
    if mismatch_returns or mismatch_reviews:
        issues.append(
            _issue(
                profile,
                "DESCRIPTION_MISMATCH",
                "description",
                "Buyers find the product not as described: check the description and images "
                "against the product.",
                evidence=_evidence(mismatch_returns, signals.returned, mismatch_reviews),
            )
        )
    missing_returns = signals.returns_of("missing_parts")
    if missing_returns:
        issues.append(
            _issue(
                profile,
                "BOX_CONTENTS_SUGGESTED",
                "description",
                "Buyers report missing parts: list exactly what is in the box.",
                evidence=_evidence(missing_returns, signals.returned, None),
            )
        )
    return issues


def _high_defect_issue(profile, signals, sold):
    """``RETURNS_HIGH_DEFECT`` when defective returns per unit sold reach the rate, else None."""
    defective = signals.categories.get("defective", 0)
    if not (defective >= MIN_DEFECT_RETURNS and sold and defective / sold >= HIGH_DEFECT_RATE):
        return None
    return _issue(
        profile,
        "RETURNS_HIGH_DEFECT",
        "product",
        f"{defective} of {sold} units sold came back defective ({defective / sold:.0%}): "
        "check the batch with the supplier before selling more, and say in the "
        "description how to use and care for the product.",
        evidence={
            "defective_returns": defective,
            "units_sold": sold,
            "defect_rate": round(defective / sold, 4),
            "returns_total": signals.returned,
        },
    )


def _negative_reviews_issue(profile, signals, reviews):
    """``REVIEWS_NEGATIVE`` when enough reviews are negative in words or stars, else None."""
    average = reviews.get("average_score")
    rating = reviews.get("average_rating")
    count = reviews.get("review_count") or 0
    negative_words = average is not None and average <= NEGATIVE_SCORE
    negative_stars = rating is not None and rating <= LOW_RATING
    if not (count >= MIN_REVIEWS and (negative_words or negative_stars)):
        return None
    worst = sorted(
        (entry.get("average_score"), aspect)
        for aspect, entry in signals.aspects.items()
        if entry.get("average_score") is not None and entry["average_score"] < 0
    )[:2]
    about = ", ".join(aspect for _, aspect in worst) or "the product"
    return _issue(
        profile,
        "REVIEWS_NEGATIVE",
        "reviews",
        f"Reviews are negative on average (most about {about}): answer the "
        "complaints in the description.",
        evidence={
            "review_count": count,
            "average_score": None if average is None else round(average, 3),
            "average_rating": rating,
        },
    )


def _evidence(returns, returned, aspect):
    evidence = {}
    if returns:
        evidence["returns"] = returns
        evidence["returns_total"] = returned
    if aspect:
        evidence["review_mentions"] = aspect.get("mentions")
        evidence["review_average_score"] = round(aspect["average_score"], 3)
    return evidence


# Score, proposals ------------------------------------------------------------------------


def score(issues: Iterable[dict[str, Any]]) -> int:
    """100 minus a penalty per distinct code, by its severity; at least 0."""
    worst = {}
    for issue in issues:
        penalty = PENALTY[issue["severity"]]
        worst[issue["code"]] = max(worst.get(issue["code"], 0), penalty)
    return max(0, 100 - sum(worst.values()))


def propose(
    product: Product,
    profile: ListingProfile,
    keywords: Sequence[dict[str, Any]] = (),
    returns: dict[str, Any] | None = None,
    reviews: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The proposal for one product: ``{sku, score, issues, proposed_title,
    suggestions}``."""
    issues = field_issues(product, profile) + signal_issues(profile, returns, reviews)
    terms = [entry["term"] for entry in keywords]
    # Words a short title may gain: the product's own description, never its category (a
    # bare "home" or "kitchen" says nothing a shopper searches for) nor the category's
    # keywords (common in the category is not the same as true of this product).
    proposed, changes = propose_title(product.title, profile, [product.description or ""])
    suggestions = []
    if proposed is not None and proposed != product.title:
        suggestions.append(
            {
                "kind": "title",
                "field": "title",
                "changes": changes,
                "message": "Use the proposed title.",
            }
        )
    elif proposed is None:
        suggestions.append(
            {
                "kind": "title",
                "field": "title",
                "changes": changes,
                "message": "No title without issues can be built from the product's own "
                "words: rewrite it with product type, brand and key attributes.",
            }
        )
    if keywords:
        suggestions.append(
            {
                "kind": "keywords",
                "field": "title",
                "keywords": list(keywords),
                "message": f"Common in {product.category!r} titles and missing from this "
                f"one: {', '.join(terms)}.",
            }
        )
    return {
        "sku": product.sku,
        "score": score(issues),
        "issues": issues,
        "proposed_title": proposed,
        "suggestions": suggestions,
    }


# The job ---------------------------------------------------------------------------------


def load_corpus(tenant_id: str, categories: Iterable[str]) -> tuple[KeywordCorpus | None, set[str]]:
    """The keyword corpus of the tenant's catalogue and the SKUs it holds (None when no
    product asked about has a category)."""
    if not categories:
        return None, set()
    rows = (
        Product.select(Product.sku, Product.category, Product.title)
        .where(Product.tenant == tenant_id)
        .order_by(Product.updated_at.desc(), Product.id.desc())
        .limit(CORPUS_LIMIT)
        .tuples()
    )
    corpus = KeywordCorpus()
    loaded = set()
    for sku, category, title in rows.iterator():
        corpus.add(category, title)
        loaded.add(sku)
    return corpus, loaded


def optimize_listings(
    tenant_id: str,
    skus: Iterable[str],
    marketplace: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run ``listing_optimize`` for ``skus``; ``progress(done, total)`` after each chunk."""
    profile = profile_for(marketplace)
    skus = list(dict.fromkeys(skus))
    products = {
        p.sku: p
        for p in Product.select().where((Product.tenant == tenant_id) & Product.sku.in_(skus))
    }
    found = [sku for sku in skus if sku in products]
    corpus, loaded = load_corpus(
        tenant_id, {products[s].category for s in found if products[s].category}
    )
    returns = return_signals(tenant_id, found) if found else {}
    reviews = review_signals(tenant_id, found) if found else {}
    proposals = []
    total = len(found)
    if progress:
        progress(0, total)
    for start in range(0, total, CHUNK):
        for sku in found[start : start + CHUNK]:
            product = products[sku]
            keywords = (
                corpus.suggest(
                    product.category,
                    product.title,
                    included=sku in loaded,
                    description=product.description,
                )
                if corpus is not None
                else []
            )
            proposals.append(
                propose(product, profile, keywords, returns.get(sku), reviews.get(sku))
            )
        if progress:
            progress(min(start + CHUNK, total), total)
    return {
        "profile": profile.name,
        "marketplace": marketplace,
        "proposals": proposals,
        "skus_not_found": [sku for sku in skus if sku not in products],
    }
