"""The per-tenant review store: reviews and their scores are kept, so a later
``review_sentiment`` job scores only the reviews it has not seen (or that were edited, or
were scored by an older version of the scorer)."""

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from peewee import (
    AutoField,
    BigIntegerField,
    CharField,
    DoubleField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from ..auth.models import Tenant
from ..db import BaseModel, JSONField, write_transaction
from ..sql import Statement, executemany, insert_statement
from ..timeutil import now_ms
from .sentiment import (
    ASPECTS,
    SCORER_VERSION,
    average,
    label_for,
    rating_mismatch,
    score_review,
)

INLINE_SOURCE = "inline"  # reviews given in the job's params rather than fetched
CHUNK = 500  # reviews looked up, scored and written per step (progress, lease renewal)


class Review(BaseModel):
    """One review of one SKU, from a marketplace (``source``) or given inline."""

    id = AutoField()  # internal, never shown
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    source = CharField(max_length=64)  # the marketplace, or "inline"
    external_id = CharField(max_length=200)  # the review's id at the source
    sku = CharField(max_length=64)
    rating = IntegerField(null=True)
    title = TextField(null=True)
    text = TextField()
    content_hash = CharField(max_length=32)  # of title and text: an edit is scored again
    reviewed_at = BigIntegerField(null=True)  # the review's created_at at the source
    score = DoubleField()
    label = CharField(max_length=8)
    aspects = JSONField(default=dict)  # {aspect: score}
    scorer_version = CharField(max_length=16)
    scored_at = BigIntegerField()
    created_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "analysis_review"
        indexes = (
            (("tenant", "source", "external_id"), True),
            (("tenant", "sku"), False),
        )


# one plain statement: peewee's query building and row wrapping cost more than the
# lookup itself on this path (a job re-reading 10,000 known reviews)
_EXISTING = Statement(
    "SELECT {R.external_id}, {R.id}, {R.content_hash}, {R.scorer_version}, {R.score},"
    " {R.label}, {R.aspects} FROM {R} WHERE {R.tenant} = {p:tenant} AND {R.source} = {p:source}"
    " AND {R.external_id} IN ({in:ids})",
    R=Review,
)


def content_hash(title: str | None, text: str) -> str:
    return hashlib.sha256(f"{title or ''}\x1f{text}".encode()).hexdigest()[:32]


def inline_id(review: dict[str, Any]) -> str:
    """The id of an inline review: its own, or one derived from its SKU and words (the same
    review given again is recognised)."""
    if review.get("id"):
        return str(review["id"])
    digest = hashlib.sha256(
        f"{review['sku']}\x1f{review.get('title') or ''}\x1f{review['text']}".encode()
    ).hexdigest()
    return "h_" + digest[:30]


def _existing(tenant_id, source, external_ids):
    """``{external_id: (row id, content hash, scorer version, score, label, aspects)}``."""
    if not external_ids:
        return {}
    cursor = _EXISTING.execute({"tenant": tenant_id, "source": source, "ids": external_ids})
    return {row[0]: (*row[1:6], json.loads(row[6]) if row[6] else {}) for row in cursor}


_COLUMNS = (
    "tenant",
    "source",
    "external_id",
    "sku",
    "rating",
    "title",
    "text",
    "content_hash",
    "reviewed_at",
    "score",
    "label",
    "aspects",
    "scorer_version",
    "scored_at",
    "created_at",
)


def _insert(rows: list[dict]) -> None:
    """Insert many reviews with one prepared statement (building the INSERT with peewee
    cost more than scoring). A review a concurrent job of the tenant kept a moment ago is
    left as it is: its score is as good as ours."""
    aspects = Review.aspects
    params = [
        tuple(aspects.db_value(row[name]) if name == "aspects" else row[name] for name in _COLUMNS)
        for row in rows
    ]
    executemany(insert_statement(Review, _COLUMNS, on_conflict="DO NOTHING"), params)


def store_reviews(
    tenant_id: str,
    source: str,
    reviews: Sequence[dict[str, Any]],
    progress: Callable[[int], None] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Score and keep ``reviews`` (dicts ``{external_id, sku, rating, title, text,
    reviewed_at}``); returns ``(scored, new_count)``: each review with its ``score``,
    ``label`` and ``aspects``, and how many were scored in this call.

    Reviews already kept with the same words and scorer version keep their stored score.
    ``progress(done)`` is called after each chunk.
    """
    unique = {}
    for review in reviews:  # a review listed twice counts once (the last one)
        unique[review["external_id"]] = review
    items = list(unique.values())
    scored, new_count, now = [], 0, now_ms()
    for start in range(0, len(items), CHUNK):
        chunk = items[start : start + CHUNK]
        chunk_scored, inserts, updates = _score_chunk(tenant_id, source, chunk, now)
        scored.extend(chunk_scored)
        new_count += len(inserts) + len(updates)
        if inserts or updates:
            with write_transaction():
                if inserts:
                    _insert(inserts)
                for row_id, values in updates:
                    Review.update(**values).where(Review.id == row_id).execute()
        if progress is not None:
            progress(start + len(chunk))
    return scored, new_count


def _score_chunk(tenant_id, source, chunk, now):
    """Each review of ``chunk`` with its score (the stored one when its words and the
    scorer are the same), and the rows to insert and to update for the ones scored now."""
    known = _existing(tenant_id, source, [r["external_id"] for r in chunk])
    scored, inserts, updates = [], [], []
    for review in chunk:
        digest = content_hash(review.get("title"), review["text"])
        row = known.get(review["external_id"])
        if row is not None and row[1] == digest and row[2] == SCORER_VERSION:
            scored.append({**review, "score": row[3], "label": row[4], "aspects": row[5]})
            continue
        result = score_review(review["text"], review.get("title"))
        values = {
            "tenant": tenant_id,
            "source": source,
            "external_id": review["external_id"],
            "sku": review["sku"],
            "rating": review.get("rating"),
            "title": review.get("title"),
            "text": review["text"],
            "content_hash": digest,
            "reviewed_at": review.get("reviewed_at"),
            "score": result.score,
            "label": result.label,
            "aspects": result.aspects,
            "scorer_version": SCORER_VERSION,
            "scored_at": now,
        }
        if row is None:
            inserts.append({"created_at": now, **values})
        else:
            updates.append((row[0], values))
        scored.append(
            {**review, "score": result.score, "label": result.label, "aspects": result.aspects}
        )
    return scored, inserts, updates


def summarize(scored: Sequence[dict[str, Any]], limit: int) -> dict[str, Any]:
    """The ``review_sentiment`` result body over ``scored`` reviews."""
    overall = {"positive": 0, "neutral": 0, "negative": 0}
    for review in scored:
        overall[review["label"]] += 1
    overall["average_score"] = average(r["score"] for r in scored)
    by_sku = _reviews_by_sku(scored)
    skus = [_sku_summary(sku, by_sku[sku]) for sku in sorted(by_sku)]
    listed = scored[:limit]
    return {
        "review_count": len(scored),
        "overall": overall,
        "rating_mismatch_count": sum(entry["rating_mismatch_count"] for entry in skus),
        "by_sku": skus,
        "reviews": [_listed_review(review) for review in listed],
        "reviews_truncated": len(scored) > len(listed),
    }


def _reviews_by_sku(scored):
    """SKU -> its reviews' scores, ratings, aspect scores and rating mismatches."""
    by_sku = {}
    for review in scored:
        entry = by_sku.setdefault(
            review["sku"], {"scores": [], "ratings": [], "aspects": {}, "mismatches": 0}
        )
        entry["scores"].append(review["score"])
        entry["mismatches"] += rating_mismatch(review.get("rating"), review["label"])
        if review.get("rating") is not None:
            entry["ratings"].append(review["rating"])
        for aspect, value in review["aspects"].items():
            entry["aspects"].setdefault(aspect, []).append(value)
    return by_sku


def _sku_summary(sku, entry):
    """A SKU's entry of ``by_sku``: averages, label, mismatches and aspects."""
    mean = average(entry["scores"])
    return {
        "sku": sku,
        "review_count": len(entry["scores"]),
        "average_score": mean,
        "label": label_for(mean),
        "average_rating": average(entry["ratings"]),
        "rating_mismatch_count": entry["mismatches"],
        "aspects": [
            {
                "aspect": aspect,
                "mentions": len(entry["aspects"][aspect]),
                "average_score": average(entry["aspects"][aspect]),
            }
            for aspect in ASPECTS
            if aspect in entry["aspects"]
        ],
    }


def _listed_review(review):
    """A review of the result's ``reviews`` list."""
    return {
        "id": review["external_id"],
        "sku": review["sku"],
        "rating": review.get("rating"),
        "title": review.get("title"),
        "text": review["text"],
        "score": review["score"],
        "label": review["label"],
        "rating_mismatch": rating_mismatch(review.get("rating"), review["label"]),
        "aspects": list(review["aspects"]),
    }


def stored_review_stats(
    tenant_id: str, skus: Iterable[str]
) -> dict[str, tuple[list[float], dict[str, list[float]], list[int]]]:
    """``{sku: ([scores], {aspect: [scores]}, [ratings])}`` over every stored review of
    ``skus``."""
    stats = {}
    query = (
        Review.select(Review.sku, Review.score, Review.aspects, Review.rating)
        .where((Review.tenant == tenant_id) & (Review.sku.in_(list(skus))))
        .tuples()
    )
    for sku, score, aspects, rating in query:
        entry = stats.setdefault(sku, ([], {}, []))
        entry[0].append(score)
        for aspect, value in (aspects or {}).items():
            entry[1].setdefault(aspect, []).append(value)
        if rating is not None:
            entry[2].append(rating)
    return stats
