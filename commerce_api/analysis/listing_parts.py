"""Parts of the category's longer terms (round 11 of issue 30): a phrase the category's
titles say nearly always beside the same word is a part of a longer term, no suggestion
alone. "garage door" and "door opener" are parts of "Garage Door Opener" only in so far
as they keep their neighbour: "door opener" always follows "garage" (a noun), "night"
always goes before "vision", "detergent" before "tank", "power bank" before "function".
A phrase followed by the rest of its title's kind ("Quick Dry [Bath Towel]", "Wireless
[Gaming Mouse]", "Garage Door [Opener]") is a modifier of the product's kind, a term of
its own, and so is the kind after a property ("[Insulated] Water Bottle"; not "speed"
of "Variable Speed", nor a material: "wool" of "Merino Wool").

A phrase is a part when one neighbour stands beside it in ``PART_SHARE`` of the titles
that have it; a lone word that describes nothing (not a property: "foam" of "memory
foam") already in ``ALONE_SHARE`` of them.
"""

import re
from collections import Counter
from collections.abc import Callable, Iterable

from .listing_referents import PHRASE_TOKEN, cached_stem, usable

PART_SHARE = 0.85
ALONE_SHARE = 0.5
MAX_PART = 2  # words in a phrase that may be a part (of a term of three)
# the noun phrases of a title: its parts between commas, brackets, dashes and slashes
_TITLE_PARTS = re.compile(r"[,()|/]|\s[-\u2013]\s")


def _runs(title):
    """The runs of usable words of ``title``'s noun phrases, as stems."""
    for part in _TITLE_PARTS.split(title or ""):
        run = []
        for match in [*PHRASE_TOKEN.finditer(part), None]:
            word = match.group().casefold() if match is not None else None
            if usable(word):
                run.append(cached_stem(word))
            elif run:
                yield run
                run = []


def parts_of_longer_terms(
    titles: Iterable[tuple[str | None, str | None]],
    describes: Callable[[str], bool],
    least: int,
) -> set[tuple[str, ...]]:
    """The phrases (stems) of one or two words that ``titles`` (``(title, the stem of its
    kind)``) say nearly always beside the same word (module docstring);
    ``describes(stem)``: the word is a property; ``least``: titles a neighbour must stand
    beside the phrase in."""
    have, beside = Counter(), Counter()
    for title, kind in titles:
        seen, neighbours = set(), set()
        for run in _runs(title):
            for start in range(len(run)):
                for end in range(start + 1, min(start + MAX_PART, len(run)) + 1):
                    phrase = tuple(run[start:end])
                    seen.add(phrase)
                    if end < len(run) and kind not in run[end:]:
                        neighbours.add((phrase, "after", run[end]))
                    if start and not (describes(run[start - 1]) and kind in phrase):
                        neighbours.add((phrase, "before", run[start - 1]))
        have.update(seen)
        beside.update(neighbours)
    parts = set()
    for (phrase, _, _), n in beside.items():
        share = ALONE_SHARE if len(phrase) == 1 and not describes(phrase[0]) else PART_SHARE
        if n >= least and n >= share * have[phrase]:
            parts.add(phrase)
    return parts
