"""Misspelt words of our titles in an answer (round 14 of issue 30): "Insulated Shelter
Tnet", "Manual Antena Matching Unit", "Tassle Comb". A capitalised word of the answer,
not its sentence's first, that no title has, is read as a word of ours one edit away (a
letter added, dropped, changed, or two swapped) when exactly one such word fits and a
neighbour of it in the answer is a word of a title that has it: a misspelling inside our
product's name as titles are written, not any word that happens to look like one of ours
("a thumb compass lets you ..." keeps its "lets", not our "Left").
"""

import re
from collections.abc import Collection, Mapping, Sequence

from .listing_title import STOPWORDS, stem

MIN_LETTERS = 4  # shorter words are not corrected
# a capitalised word after a word of its sentence (not its first)
_CAPITALISED = re.compile(r"(?<=[\w,)] )[A-Z][a-z]+\b")


def capitalised(text: str) -> set[str]:
    """The capitalised words of ``text`` that do not open a sentence, case-folded."""
    return {word.casefold() for word in _CAPITALISED.findall(text)}


def _deletions(word: str) -> set[str]:
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def _one_edit(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by one added, dropped or changed letter, or by two
    neighbouring letters swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diffs) == 1:  # but "nitrate" is no misspelt "nitrite" (round 36)
            return {a.removesuffix("e")[-2:], b.removesuffix("e")[-2:]} != {"at", "it"}
        i, j = (diffs + [0, 0])[:2]
        return len(diffs) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long = sorted((a, b), key=len)
    if long == "a" + short:  # "symmetric" is no misspelt "asymmetric" (round 34)
        return False
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


class Misspellings:
    """The words of a catalogue's titles, indexed by their one-letter deletions."""

    def __init__(self, vocabulary: Collection[str], orders: Mapping[str, Sequence[str]]):
        self.vocabulary = vocabulary
        self.orders = orders  # SKU -> the stems of its title's words, in order
        self.index: dict[str, set[str]] | None = None  # built on first use

    def _near(self, word: str) -> set[str]:
        if self.index is None:
            self.index = {}
            for known in self.vocabulary:
                if len(known) >= MIN_LETTERS and known.isalpha():
                    for variant in _deletions(known):
                        self.index.setdefault(variant, set()).add(known)
        found = set()
        for variant in _deletions(word):
            found |= self.index.get(variant, set())
        return {known for known in found if _one_edit(word, known)}

    def _in_place(self, word, keys, index, holding):
        """True when a title that has ``word`` has the answer's word before or after
        ``keys[index]`` beside it on the same side (round 25: "Hard Case for Seven Harps"
        is no "harp" of our "Zip Case for Seven Harps")."""
        for offset in (-1, 1):
            if not 0 <= index + offset < len(keys):
                continue
            neighbour = stem(keys[index + offset])
            for sku in holding.get(word, set()) & holding.get(neighbour, set()):
                title = self.orders.get(sku, ())
                if any(
                    title[i] == word
                    and 0 <= i + offset < len(title)
                    and title[i + offset] == neighbour
                    for i in range(len(title))
                ):
                    return True
        return False

    def fix(
        self, keys: Sequence[str], holding: Mapping[str, set[str]], text: str
    ) -> dict[int, str]:
        """``{index: our word}`` for the misspelt ``keys`` of ``text`` (module docstring)."""
        fixed, titled = {}, None
        for index, key in enumerate(keys):
            word = stem(key)
            if len(key) < MIN_LETTERS or not key.isalpha() or word in holding:
                continue
            if key in STOPWORDS:
                continue
            titled = capitalised(text) if titled is None else titled
            if key not in titled:
                continue
            near = self._near(word) | self._near(key)  # "Stainles": stem "stainle"
            fits = [w for w in near if self._in_place(w, keys, index, holding)]
            if len(fits) == 1:
                fixed[index] = fits[0]
        return fixed
