"""Parts of the category's longer terms (rounds 11 and 12 of issue 30): a phrase the
category's titles say nearly always beside the same word is a part of a longer term, no
suggestion alone. "door opener" always follows "garage", "garage door" always goes before
"opener", "night" before "vision", "detergent" before "tank", "electric" before "lunch
box", "built" before "in" (a particle counts as a neighbour: "Built-In"). Of a whole term
and its part, the whole is suggested when the title has the rest ("garage door opener" of
"Screw Drive Opener": ``listing_keywords._fewest_new_words``), never the part.

A phrase is a part when one neighbour stands beside it in ``PART_SHARE`` of the titles
that have it; a lone word that describes nothing (not a property) after the same word in
``ALONE_SHARE`` of them ("foam" of "memory foam"). A word that varies its neighbour
("Compact Windproof Umbrella", "Compact Travel Umbrella") is a term of its own. A word
the titles also write as two ("Lunchbox", "Lunch Box") is read as the two.
"""

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from .listing_referents import COLOURS, PHRASE_TOKEN, cached_stem, usable

PART_SHARE = 0.85
ALONE_SHARE = 0.5
MAX_PART = 2  # words in a phrase that may be a part (of a term of three)
_PARTICLES = frozenset(["in", "on", "up", "off", "out", "over", "down", "through"])
# the noun phrases of a title: its parts between commas, brackets, dashes and slashes
_TITLE_PARTS = re.compile(r"[,()|/]|\s[-\u2013]\s")


def _runs(title):
    """The runs of usable words of ``title``'s noun phrases, as stems."""
    for part in _TITLE_PARTS.split(title or ""):
        run = []
        for match in [*PHRASE_TOKEN.finditer(part), None]:
            word = match.group().casefold() if match is not None else None
            # a colour word after a word is its neighbour too: "warm" of "Warm White", not
            # "rubber" of "Natural Rubber" (round 14)
            if usable(word) or word in _PARTICLES or (run and word in COLOURS):
                run.append(cached_stem(word))
            elif run:
                yield run
                run = []


def parts_of_longer_terms(
    titles: Iterable[str | None], describes: Callable[[str], bool], least: int
) -> set[tuple[str, ...]]:
    """The phrases (stems) of one or two words that ``titles`` say nearly always beside
    the same word (module docstring); ``describes(stem)``: the word is a property;
    ``least``: titles a neighbour must stand beside the phrase in."""
    runs = [list(_runs(title)) for title in titles]
    joined = {  # "lunchbox" is "lunch box" when the titles say that too
        first + second: (first, second)
        for title in runs
        for run in title
        for first, second in zip(run, run[1:], strict=False)
        if min(len(first), len(second)) >= 3
    }
    have, beside = Counter(), Counter()
    for title in runs:
        seen, neighbours = set(), set()
        for run in title:
            run = [part for word in run for part in joined.get(word, (word,))]
            for start in range(len(run)):
                for end in range(start + 1, min(start + MAX_PART, len(run)) + 1):
                    phrase = tuple(run[start:end])
                    seen.add(phrase)
                    if end < len(run):
                        neighbours.add((phrase, "after", run[end]))
                    if start:
                        neighbours.add((phrase, "before", run[start - 1]))
        have.update(seen)
        beside.update(neighbours)
    parts = set()
    for (phrase, side, _), n in beside.items():
        alone = side == "before" and len(phrase) == 1 and not describes(phrase[0])
        share = ALONE_SHARE if alone else PART_SHARE
        if n >= least and n >= share * have[phrase]:
            parts.add(phrase)
    return parts


def two_terms(
    phrase: tuple[str, ...],
    own_words: set[str],
    counts: Mapping,
    others: int,
    least: int,
    share: float,
) -> bool:
    """True when ``phrase``, none of its words the title's, is two terms of the category in
    a row, each said on its own by the category's titles (``least`` and ``share``
    of the ``others``, and more often than in the run: ``PART_SHARE``), the run itself
    in no more than half of them (not "most"): "single serve blender" is "single serve"
    and "blender", no term of its own; "insulated jacket", in most titles, is one (round
    12)."""
    whole = counts.get(phrase, 0)
    if len(phrase) < 2 or own_words.intersection(phrase) or whole * 2 > others:
        return False
    return any(
        all(
            counts.get(part, 0) >= max(least, share * others)
            and whole < PART_SHARE * counts.get(part, 0)
            for part in (phrase[:split], phrase[split:])
        )
        for split in range(1, len(phrase))
    )


def beside_own_term(
    phrase: tuple[str, ...],
    own: Mapping[tuple[str, ...], str],
    counts: Mapping[tuple[str, ...], int],
    others: int,
    min_titles: int,
    min_share: float,
) -> bool:
    """True when the words ``phrase`` shares with the title all come from another common
    term the title says ("pizza stone" of "Pizza Oven, Dual Fuel": "pizza" is the oven's;
    round 13): the phrase is a term of its own, not the title's term again."""
    if len(phrase) < 2:
        return False
    own_words = {word for term in own for word in term}
    shared = own_words.intersection(phrase)
    if len(shared) == len(set(phrase)):
        return False
    return any(
        len(term) > 1
        and term != phrase
        and shared <= set(term)
        and not set(term) <= set(phrase)  # not "digital kitchen scale" of "Kitchen Scale"
        and counts.get(term, 0) - 1 >= min_titles
        and (counts.get(term, 0) - 1) / others >= min_share
        for term in own
    )
