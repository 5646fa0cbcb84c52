"""Which of the shop's products an assistant's answer names (``llm_visibility_score``).

An answer is cut into units: the items of a list (with their nested lines) and the
sentences of prose. A unit names one of our products when it carries the product's GTIN or
SKU, or, said of our brand, the words of its title that single it out in the catalogue:

- the *words* of a title are its significant words (three letters or more, not stop or
  promotional words), plurals folded, hyphenated words split ("Dot-grid" is "dot grid");
- a unit speaks of our brand when it names the brand, when it is a prose sentence after
  one that did in the same paragraph ("Fieldhouse sells a blanket. Their wool blanket..."),
  or when it is an item of a list whose heading names the brand ("Fieldhouse picks:");
- in such a unit the product's words found, F, must be at least two (or the whole title)
  and no other product of the catalogue may have all of F: "Fieldhouse enamel mug" names
  no SKU when the shop sells a white and a blue one; "Fieldhouse white enamel mug" names
  the white one.

An exact full title names its product in any unit, brand or not ("Oiled Oak Chopping
Board 30 x 20 cm"): the title's words and numbers in order, case, punctuation and
possessives aside, when the title is a product's name rather than a kind's (at least
``EXACT_MIN_TOKENS`` words and numbers, ``EXACT_MIN_WORDS`` of them significant); a title
found inside a longer one found in the same place is not named. Said of our brand, the
title's words must also name what the product is (its kind, the head noun of its title:
"Insulated Coffee Flask" is no tumbler), must not be another product of the brand (a name
that follows the brand in capitals with a word our title lacks: "Tidewater Canvas Tote
Bag" is not our canvas duffel bag), must not speak of any product of a kind ("any enamel
cup from Falcon", "whichever Birchwood board"), and must not name only colours our title
lacks.

The brand alone, or the brand with a kind of product ("Fieldhouse mugs"), names no SKU:
it is a brand mention. A generic title said of another brand ("Falcon enamel mug, white")
is not ours. When the shop has no brand words at all, a unit names a product by its title
alone: F of at least ``TITLE_MIN_WORDS`` words, ``TITLE_COVERAGE`` of its title, and again
shared by no other product.
"""

import re
from dataclasses import dataclass

from .listing_keywords import COLOURS, kind_of
from .listing_title import PROMOTIONAL_WORDS, STOPWORDS, has_letter, stem

TITLE_COVERAGE = 0.75  # without a brand: share of the title's words a unit must carry
TITLE_MIN_WORDS = 3  # ... and at least this many of them
MIN_FOUND = 2  # with the brand: words of the title found (or the whole title)
RARE_HOLDERS = 256  # a word this few titles have: its products are looked at one by one
MAX_COMMON_WORDS = 8  # common words of one unit combined (the rarest ones)
EXACT_MIN_TOKENS = 5  # an exact title names its product alone from this many words/numbers
EXACT_MIN_WORDS = 3  # ... of which this many significant
QUANTIFIER_REACH = 4  # words before the kind or the brand a quantifier reaches
QUANTIFIERS = frozenset(["any", "every", "all", "whichever", "whatever", "each"])
_EXACT_TOKEN = re.compile(r"[^\W\d_]+|\d+")  # letter runs and digit runs ("350ml": 2)
_NAME_AFTER = r"(?:['\u2019]s)?((?:\s+(?:[A-Z0-9][\w.\-]*|&|with|of|and|for|in))+)"
_CONNECTORS = frozenset(["with", "of", "and", "for", "in"])
_COLOUR_STEMS = frozenset(stem(word) for word in COLOURS)

_NUMBERED = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*)?\s*(\d{1,3})[.)]\s+(.*\S)")
_BULLET = re.compile(r"^(\s*)[-*\u2022+]\s+(.*\S)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DIGIT_RUN = re.compile(r"\d[\d \-]{6,}\d")
_POSSESSIVE = re.compile(r"['\u2019]s\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")
_SKU_TOKEN = re.compile(r"[A-Za-z0-9._-]+")  # the characters a SKU may have
_NOT_TITLE_WORDS = STOPWORDS | PROMOTIONAL_WORDS


@dataclass
class Unit:
    text: str
    rank: int | None  # the list item's rank; None for prose
    paragraph: int  # prose sentences of one paragraph (and one list) share it
    heading: bool = False  # prose that introduces the list right after it


def answer_units(answer: str | None) -> list[Unit]:
    """The units of ``answer`` in order (see the module docstring)."""
    lines = (answer or "").splitlines()
    numbered = any(_NUMBERED.match(line) for line in lines)
    bullet_indents = [len(m.group(1)) for m in map(_BULLET.match, lines) if m]
    base_indent = min(bullet_indents) if bullet_indents else 0
    units, current, rank, paragraph = [], None, 0, 0
    for line in lines:
        if not line.strip():
            paragraph += 1
            continue
        if numbered:
            match = _NUMBERED.match(line)
            item = match.group(2) if match else None
        else:
            match = _BULLET.match(line)
            item = match.group(2) if match and len(match.group(1)) <= base_indent + 1 else None
        if item is not None:
            if current is None and units and units[-1].rank is None:
                units[-1].heading = units[-1].text.rstrip().endswith(":")
            rank += 1
            units.append(Unit(item, rank, paragraph))
            current = len(units) - 1
            continue
        if current is not None and (line[:1].isspace() or _BULLET.match(line)):
            nested = _BULLET.match(line)
            units[current].text += " " + (nested.group(2) if nested else line.strip())
            continue
        if current is not None:
            paragraph += 1  # prose after a list starts a new paragraph
        current = None
        units.extend(
            Unit(sentence, None, paragraph)
            for sentence in _SENTENCE_END.split(line.strip())
            if sentence
        )
    return units


def words_of(text: str | None) -> list[str]:
    """The significant words of ``text``, plurals folded, in order, each once."""
    words = []
    for token in _keys(text):
        if len(token) < 3 or not has_letter(token) or token in _NOT_TITLE_WORDS:
            continue
        word = stem(token)
        if word not in words:
            words.append(word)
    return words


def _keys(text):
    """The words of ``text`` as lower-case tokens of letters and digits, possessives cut."""
    return _WORD.findall(_POSSESSIVE.sub("", text or "").casefold())


def exact_tokens(text: str | None) -> tuple[str, ...]:
    """``text`` as compared for an exact title: lower-case letter runs and digit runs,
    possessives cut."""
    return tuple(_EXACT_TOKEN.findall(_POSSESSIVE.sub("", text or "").casefold()))


@dataclass(frozen=True)
class Product:
    sku: str
    title: str
    gtin: str | None = None


class CatalogueMatcher:
    """Finds the products of a catalogue (and the brand) in answers."""

    def __init__(self, products, brand=None):
        self.brand = _keys(brand)
        brand_words = {stem(word) for word in self.brand}
        self.brand_name = (
            re.compile(
                r"(?<![\w])(?i:"
                + r"\W+".join(re.escape(w) for w in (brand or "").split() if _keys(w))
                + ")"
                + _NAME_AFTER
            )
            if self.brand
            else None
        )
        self.products = {}
        self.words = {}
        self.kinds = {}  # sku -> the stem of its head noun when a word of its title, or None
        self.exact = {}  # a title's exact tokens -> the SKUs with that title
        self.exact_lengths = set()  # the lengths (in tokens) of those titles
        self.holding = {}  # word -> SKUs whose title has it
        self.gtins = {}
        self.skus = {}  # the SKU case-folded -> the SKU
        for product in products:
            sku = product.sku
            self.products[sku] = product
            # (promotional words are no title words; phrases such as "best seller" are
            # left in: cutting them out costs more than they can confuse)
            self.words[sku] = frozenset(words_of(product.title)) - brand_words
            if (
                len(_keys(product.title)) >= EXACT_MIN_TOKENS
                and len(self.words[sku]) >= EXACT_MIN_WORDS
            ):
                tokens = exact_tokens(product.title)
                self.exact.setdefault(tokens, []).append(sku)
                self.exact_lengths.add(len(tokens))
            for word in self.words[sku]:
                self.holding.setdefault(word, set()).add(sku)
            gtin = (product.gtin or "").strip().lstrip("0")
            if gtin:
                self.gtins.setdefault(gtin, set()).add(sku)
            self.skus[sku.casefold()] = sku

    def names_brand(self, text: str) -> bool:
        if not self.brand:
            return False
        keys, width = _keys(text), len(self.brand)
        return any(keys[i : i + width] == self.brand for i in range(len(keys) - width + 1))

    def _found(self, present):
        """``{sku: its title's words in present}`` for every product that ``present`` might
        single out: those holding one of its rarer words, and those that a combination of
        its common words alone narrows down to (subsets walked with their intersections,
        which shrink fast), so a common word is never scanned product by product."""
        rare, common = [], []
        for word in present:
            holders = self.holding.get(word)
            if holders:
                (rare if len(holders) <= RARE_HOLDERS else common).append(word)
        found = {}
        for word in rare:
            for sku in self.holding[word]:
                if sku not in found:
                    found[sku] = self.words[sku] & present
        common.sort(key=lambda word: len(self.holding[word]))
        common = common[:MAX_COMMON_WORDS]

        def walk(start, holders):
            for index in range(start, len(common)):
                narrowed = self.holding[common[index]]
                narrowed = narrowed if holders is None else holders & narrowed
                if len(narrowed) == 1:
                    (sku,) = narrowed
                    found.setdefault(sku, self.words[sku] & present)
                elif narrowed:
                    walk(index + 1, narrowed)

        walk(0, None)
        return found

    def _single_out(self, found, sku):
        """True when no other product's title holds every word of ``found``."""
        holders = sorted((self.holding[word] for word in found), key=len)
        if len(holders[0]) == 1:
            return True  # a word only this product has
        return set.intersection(*holders) == {sku}

    def exact_titles(self, text: str) -> set[str]:
        """The SKUs whose whole title ``text`` says (module docstring)."""
        tokens = exact_tokens(text)
        spans = []
        for length in self.exact_lengths:
            for start in range(len(tokens) - length + 1):
                for sku in self.exact.get(tokens[start : start + length], ()):
                    spans.append((start, start + length, sku))
        return {
            sku
            for start, end, sku in spans
            if not any(s <= start and end <= e and (s, e) != (start, end) for s, e, _ in spans)
        }

    def _others_of_brand(self, text):
        """The significant words of each name that follows the brand in capitals."""
        if self.brand_name is None:
            return []
        names = []
        for match in self.brand_name.finditer(text):
            run = match.group(1).split()
            while run and run[-1].casefold() in _CONNECTORS | {"&"}:
                run.pop()
            names.append(set(words_of(" ".join(run))))
        return [name for name in names if name]

    def _of_any(self, keys, anchors):
        """True when a quantifier ("any", "whichever"...) comes shortly before one of the
        ``anchors`` (word stems) in ``keys``."""
        for index, word in enumerate(keys):
            if stem(word) in anchors and any(
                k in QUANTIFIERS for k in keys[max(0, index - QUANTIFIER_REACH) : index]
            ):
                return True
        return False

    def _said_of_it(self, sku, found, keys, names, colours):
        """The checks of a title match said of our brand (module docstring)."""
        if sku not in self.kinds:
            kind = kind_of(self.products[sku].title)
            self.kinds[sku] = kind if kind in self.words[sku] else None
        kind = self.kinds[sku]
        if kind is not None and kind not in found:
            return False  # the unit does not say what the product is
        title = self.words[sku]
        if any(name - title for name in names if name & title):
            return False  # another product of the brand
        if self._of_any(keys, {kind, *(stem(word) for word in self.brand)} - {None}):
            return False
        title_colours = title & _COLOUR_STEMS
        return not (colours and title_colours and not colours & title_colours)

    def identify(self, text: str, branded: bool) -> dict[str, str]:
        """``{sku: how}`` of the products ``text`` names; ``how`` is ``"gtin"``, ``"sku"``
        or ``"title"``; ``branded``: the unit speaks of our brand."""
        named = {}
        for run in _DIGIT_RUN.findall(text):
            for sku in self.gtins.get(re.sub(r"\D", "", run).lstrip("0"), ()):
                named[sku] = "gtin"
        for token in _SKU_TOKEN.findall(text):
            sku = self.skus.get(token.rstrip("._").casefold())
            if sku is not None and sku not in named:
                named[sku] = "sku"
        for sku in self.exact_titles(text):
            named.setdefault(sku, "title")
        if self.brand and not branded:
            return named  # a title said of no brand of ours (or of another) is not ours
        present = set(words_of(text))
        keys = _keys(text)
        names = self._others_of_brand(text) if self.brand else []
        colours = present & _COLOUR_STEMS
        for sku, found in self._found(present).items():
            title = self.words[sku]
            if sku in named or not title:
                continue
            if self.brand:
                enough = (len(found) >= MIN_FOUND or found == title) and self._said_of_it(
                    sku, found, keys, names, colours
                )
            else:
                enough = len(found) >= TITLE_MIN_WORDS and len(found) / len(title) >= TITLE_COVERAGE
            if enough and self._single_out(found, sku):
                named[sku] = "title"
        return named

    def read(self, answer: str | None) -> tuple[list[Unit], list[dict[str, str]], bool]:
        """``(units, [{sku: how} per unit], brand named anywhere)`` for ``answer``."""
        units = answer_units(answer)
        found, brand_anywhere = [], False
        branded_paragraph, branded_list = None, False
        for index, unit in enumerate(units):
            named_here = self.names_brand(unit.text)
            brand_anywhere |= named_here
            if unit.rank is None:
                branded = named_here or branded_paragraph == unit.paragraph
                if named_here:
                    branded_paragraph = unit.paragraph
                branded_list = unit.heading and named_here
            else:
                branded = named_here or branded_list
            found.append(self.identify(unit.text, branded))
            if unit.rank is not None and index + 1 < len(units) and units[index + 1].rank is None:
                branded_list = False
        return units, found, brand_anywhere
