"""Category terms of two words joined by "and" ("Wet and Dry", "Hot & Cold"; round 8 of
issue 30). The phrases of a title are runs of usable words, so "and" cuts such a term in
two and each half looked like a term of its own: "dry" was suggested to a shaver whose
description says "a close dry shave" or "wet and dry". A word the category's titles say
mostly in such a pair is no suggestion alone; the pair is suggested whole when the
description says it, neither half after a negation or of another thing.

Round 11: terms joined by "to" ("Lean to Steer", "Dusk to Dawn") are such pairs too.
"""

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from .listing_referents import cached_stem, usable

# the second word in a lookahead: "washable and wet and dry" holds "wet and dry"
_PAIR = re.compile(r"\b([^\W\d_]+)\s+(and|&|n|to)\s+(?=([^\W\d_]+)\b)", re.IGNORECASE)


def _pairs_in(text):
    """``{(stem, "and" or "to", stem): spelling}`` of the joined pairs of ``text``."""
    found = {}
    for match in _PAIR.finditer(text or ""):
        first, second = match.group(1).casefold(), match.group(3).casefold()
        joint = "to" if match.group(2).casefold() == "to" else "and"
        if usable(first) and usable(second) and len(first) >= 3 and len(second) >= 3:
            pair = (cached_stem(first), joint, cached_stem(second))
            found.setdefault(pair, f"{first} {joint} {second}")
    return found


def joined_pairs(titles: Iterable[str | None]) -> tuple[Counter, dict]:
    """``(titles per pair, spelling per pair)`` of the joined pairs of ``titles``."""
    counts: Counter = Counter()
    spelling: dict = {}
    for title in titles:
        pairs = _pairs_in(title)
        counts.update(pairs.keys())
        for pair, spelt in pairs.items():
            spelling.setdefault(pair, spelt)
    return counts, spelling


def half_of_a_pair(word: str, pairs: Mapping, counts: Mapping, least: int) -> bool:
    """True when the category's titles say ``word`` (a stem) in a joined pair in at least
    ``least`` titles and at least half as often as it appears at all ("dry" of "wet and
    dry")."""
    joined = sum(n for pair, n in pairs.items() if word in (pair[0], pair[2]))
    return joined >= least and joined * 2 >= counts.get((word,), 0)


def pairs_said(description: str | None, pairs: Mapping, said: Mapping) -> set:
    """The category's ``pairs`` the description says, both halves among the words
    ``said`` of the product (``phrases_of`` with negations and other things left out)."""
    return {
        pair
        for pair in _pairs_in(description)
        if pair in pairs and (pair[0],) in said and (pair[2],) in said
    }
