"""Keyword suggestions: words common in the titles of a category and missing from a title.

A TF-IDF reading of the catalogue where each title is a document: a term's weight in a
category is the share of the category's titles that use it (term frequency across the
category) times its inverse document frequency over the whole catalogue,
``log(1 + N / df)``, so words every title has ("set", a shop's own brand) weigh little and
words that mark the category weigh most. The product's own title is left out of the
counts, so a product never "suggests" its own words to itself.
"""

import math
from collections import Counter

from .listing_title import PROMOTIONAL_WORDS, STOPWORDS, has_letter, key

MIN_TITLES = 2  # a term must appear in at least this many other titles of the category
MIN_SHARE = 0.2  # ... and in at least this share of them
MAX_TERMS = 5
CORPUS_LIMIT = 50_000  # titles read per job (the most recently updated first)
_NOT_KEYWORDS = STOPWORDS | PROMOTIONAL_WORDS


def title_terms(title):
    """The distinct keyword terms of a title (letters, 3+ characters, no stopwords)."""
    terms = set()
    for token in (title or "").split():
        word = key(token)
        if len(word) >= 3 and has_letter(word) and word not in _NOT_KEYWORDS:
            terms.add(word)
    return terms


def _stem(word):
    """Light plural folding, so "mugs" does not suggest "mug" and vice versa."""
    if len(word) > 4 and word.endswith("es"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def category_key(category):
    return (category or "").strip().casefold()


class KeywordCorpus:
    """Term counts of a catalogue's titles, overall and per category."""

    def __init__(self, rows=()):
        self.titles = 0
        self.document_frequency = Counter()
        self.by_category = {}  # category key -> [title count, Counter]
        for category, title in rows:
            self.add(category, title)

    def add(self, category, title):
        terms = title_terms(title)
        self.titles += 1
        self.document_frequency.update(terms)
        name = category_key(category)
        if name:
            entry = self.by_category.setdefault(name, [0, Counter()])
            entry[0] += 1
            entry[1].update(terms)

    def suggest(self, category, title, included=True, limit=MAX_TERMS):
        """``[{term, score, share}]``: the category's characteristic terms missing from
        ``title``; ``included``: the title was added to the corpus (it is left out)."""
        name = category_key(category)
        if not name or name not in self.by_category:
            return []
        own = title_terms(title)
        count, frequency = self.by_category[name]
        mine = 1 if included else 0
        others = count - mine
        total = self.titles - mine
        if others < MIN_TITLES or total < 1:
            return []
        own_stems = {_stem(word) for word in own}
        scored = []
        for term, titles_with in frequency.items():
            titles_with -= mine and term in own
            if titles_with < MIN_TITLES or _stem(term) in own_stems:
                continue
            share = titles_with / others
            if share < MIN_SHARE:
                continue
            df = self.document_frequency[term] - (mine and term in own)
            score = share * math.log(1 + total / max(df, 1))
            scored.append((-score, term, share))
        scored.sort()
        return [
            {"term": term, "score": round(-neg, 3), "share": round(share, 3)}
            for neg, term, share in scored[:limit]
        ]
