"""The words a title and an answer are compared by (``visibility_match``), and the
vocabulary it reads them with (variant colours and sizes, names, clauses, the words that open
a sentence), moved out of it in round 7 of issue 30 with two additions:

- **size letters** ("XS", "M", "XL", "XXL", "3XL") are words of a title when they stand alone
  in capitals, and of an answer when they stand alone in capitals or follow "size"/"in
  size" ("the apron in XL", "a size m"): "Suit - XL" and "Suit - XXL" are told apart, and
  "in M" names the M;
- **compounds** are one word however they are written: "Quick-Draws", "quick draws" and
  "quickdraws" of a title's "Quickdraw", "longhandle" of its "Long-Handle"
  (``CompoundWords``).
"""

import re
import unicodedata
from collections.abc import Container

from .listing_keywords import COLOURS
from .listing_title import (
    PROMOTIONAL_WORDS,
    STOPWORDS,
    fold_spelling,
    has_letter,
    stem,
    word_set,
)
from .visibility_sizes import SIZE

_WORD = re.compile(r"[^\W_]+")
_POSSESSIVE = re.compile(r"['\u2019]s\b", re.IGNORECASE)
_NOT_TITLE_WORDS = STOPWORDS | PROMOTIONAL_WORDS
SIZE_LETTERS = frozenset(["xxs", "xs", "s", "m", "l", "xl", "xxl", "xxxl", "2xl", "3xl", "4xl"])
# a size letter in capitals standing alone ("- XL", "in M,"), or any case after "size"
# and a short code in capitals standing alone ("- OO Gauge", "in N"), "A" and "I" aside
_CAPITAL_SIZE = re.compile(r"(?<![\w\-.'\u2019/])([A-Z]{1,2}|XXS|XXL|XXXL|[234]XL)(?![\w\-/'])")
_NOT_CODES = frozenset(["A", "I"])
_SAID_SIZE = re.compile(
    r"\bsizes?\s+(xxs|xs|s|m|l|xl|xxl|xxxl|[234]xl)(?:\s*(?:,|/|and|or)\s*"
    r"(xxs|xs|s|m|l|xl|xxl|xxxl|[234]xl))?\b",
    re.IGNORECASE,
)
KIND_TAIL_MIN = 4  # letters of the last part of a compound kind that say it
SIZE_WORD_LETTERS = {"small": "s", "medium": "m", "large": "l"}  # of an answer
MIN_COMPOUND_PART = 3  # letters of each part of a compound ("quick"+"draw")

# colour words of variants, beyond the keyword suggester's list (a variant's colour is
# any word; these are the common ones): an answer naming one our title lacks names
# another variant
VARIANT_COLOURS = COLOURS | word_set(
    "oatmeal charcoal sage olive sand stone slate taupe mustard rust terracotta burgundy "
    "maroon khaki tan camel mint coral lavender lilac turquoise aqua silver gold graphite "
    "anthracite forest midnight ochre plum indigo denim cobalt emerald ruby blush rose "
    "peach lemon lime cherry wine mocha espresso chocolate caramel honey smoke ash pearl "
    "ecru mauve magenta cyan clay speckled matte umber sienna saffron amber jade vermilion "
    "crimson scarlet violet fuchsia azure cerulean sapphire tangerine apricot chestnut russet "
    "amethyst periwinkle cornflower heather damson onyx ebony celadon chartreuse auburn "
    "raspberry pistachio"
)
COLOUR_STEMS = frozenset(stem(word) for word in VARIANT_COLOURS)
VARIANT_STEMS = (
    COLOUR_STEMS
    | frozenset(
        stem(word)
        for word in word_set("small medium large mini xl xxl xs petite king queen double single")
    )
    | SIZE_LETTERS
)
# "in black and white", "in sage or charcoal": the colours a product comes in, no variant
_COLOUR_WORD = r"(?:" + "|".join(sorted(VARIANT_COLOURS)) + r")"
COLOUR_OPTIONS = re.compile(
    r"\bin\s+"
    + _COLOUR_WORD
    + r"(?:\s*(?:,|/|&|\band\b|\bor\b)\s*(?:and\s+|or\s+)?"
    + _COLOUR_WORD
    + r")+\b",
    re.IGNORECASE,
)
# ... and the values of a shop's own variant words, whatever they are ("comes in cinereous and
# sinopia"; round 39)
ANY_OPTIONS = re.compile(
    r"\bin\s+[^\W\d_]+(?:\s*(?:,|/|&|\band\b|\bor\b)\s*(?:and\s+|or\s+)?[^\W\d_]+)+\b",
    re.IGNORECASE,
)
# capitalised names ("an Electric Burr Coffee Grinder"): another product when it has a word
# our title lacks
CAPITALISED_NAME = re.compile(r"(?<![\w&])[A-Z][\w\-]*(?:\s+(?:[A-Z0-9][\w.\-]*|&))+")

# the clauses of a sentence ("..., and ...", "...; ...", "... - ...")
# a clause set against the one before ("..., not the L one", "..., rather than the 25 lb")
NOT_THIS = re.compile(r",\s*(?:not|rather\s+than|instead\s+of)\b[^,;.]*", re.IGNORECASE)
CLAUSE_SPLIT = re.compile(
    r",\s*(?=(?:and|but|yet|while|whereas|or|though|although|not|rather)\b)|;\s+"
    r"|\s[\u2014\u2013-]\s",
    re.IGNORECASE,
)
# a capitalised name in the possessive: "Ruffwear's Knot-a-Leash", "the meter I use is
# Strokemark's impeller model", "the diagrams I recommend are Papyrine's" (round 12)
OTHER_POSSESSIVE = re.compile(r"(?<![\w&])([A-Z][\w\-]*)['\u2019]s\b")
# a clause that says the thing is another brand's ("... the kiln I use is from Furnacia",
# "... is a Rodwell"; round 15)
IS_OTHERS = re.compile(
    r"\b(?:is|are|was|were)\s+(?:a\s+|an\s+|from\s+|by\s+|made\s+by\s+)([A-Z][\w\-]*)"
)
# words that open a sentence or stand before a product's name without being a brand
OPENERS = frozenset(
    stem(word)
    for word in word_set(
        "my our your his her their its this that these those both each every any some one "
        "two also then so but if when as yes no i we you they it he she try get buy choose "
        "pick consider recommend grab skip avoid order love like use take go see check new "
        "classic original best good great "
        # verbs that open an instruction ("Mix Sun-Dried Rassoul 500 g with rose water";
        # round 37)
        "mix add put apply soak rub spread fill hang fit place keep store wash rinse dip wrap "
        "lay start stir pour warm heat cut leave let make bring pack fold tie tune clean brush "
        "oil wipe dry soften slide clip screw attach swap replace buy fix read watch play wear"
    )
)


# the maker of a kind, not a product ("a kite maker", "an axe workshop", "box kite makers":
# round 11 of issue 30): the lower-case words before such a noun name no product
_MAKER = re.compile(
    r"(?:\b[a-z][a-z\-]*\s+){1,2}(makers?|manufacturers?|compan(?:y|ies)|workshops?|brand"
    r"|shops?|sellers?|specialists?|studio)\b"
)


def without_makers(text: str, ours: Container[tuple[str, str]]) -> str:
    """``text`` without the noun phrases that name a maker of a kind (``_MAKER``), unless
    the noun and the word before it are two words of our titles (``ours``: pairs of
    stems, as ``CompoundWords.pairs``: a "Cold Brew Maker")."""

    def maker(match):
        before = keys_of(match.group()[: match.start(1) - match.start()])
        pair = (stem(before[-1]) if before else "", stem(match.group(1).casefold()))
        return match.group() if pair in ours else " "

    return _MAKER.sub(maker, text)


def size_words(keys: list[str], holding: Container[str], brand: Container[str]) -> set[str]:
    """The size letters that size words say (``SIZE_WORD_LETTERS``: "medium" is "m") where
    our titles have them, when the word stands before a word of our titles or the brand, or
    after "size" or "in" ("the medium <brand> jacket", "in medium"; not "the medium rides
    up", another variant set against ours)."""
    said = set()
    for index, key in enumerate(keys):
        letter = SIZE_WORD_LETTERS.get(key)
        if letter is None or letter not in holding:
            continue
        after = stem(keys[index + 1]) if index + 1 < len(keys) else None
        before = keys[index - 1] if index else None
        if after in holding or after in brand or before in ("size", "in"):
            said.add(letter)
    return said


def keys_of(text: str | None) -> list[str]:
    """The words of ``text`` as lower-case tokens of letters and digits, possessives cut,
    accents dropped and British spellings read as American (``fold_spelling``)."""
    return [
        fold_spelling(key) for key in _WORD.findall(_POSSESSIVE.sub("", plain(text)).casefold())
    ]


def plain(text: str | None) -> str:
    """``text`` without accents ("Purée" is "Puree", "Plössl" is "Plossl")."""
    text = text or ""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words_of(text: str | None) -> list[str]:
    """The significant words of ``text`` (three letters or more, or a code such as "A5"),
    plurals folded, in order, each once; its size letters (module docstring) after them."""
    words = []
    for token in keys_of(text):
        if not has_letter(token) or token in _NOT_TITLE_WORDS:
            continue
        if len(token) < 3 and token.isalpha():
            continue  # "ml", "of"; a code of a letter and a digit ("A5", "4K") counts
        word = stem(token)
        if word not in words:
            words.append(word)
    for letters in size_letters(text):
        if letters not in words:
            words.append(letters)
    return words


def size_letters(text: str | None) -> list[str]:
    """The size letters and short codes ``text`` says, lower case, in order."""
    text = text or ""
    found = [
        m.group(1).casefold()
        for m in _CAPITAL_SIZE.finditer(text)
        if m.group(1) not in _NOT_CODES
        and not text[: m.start()].rstrip()[-1:].isdigit()  # "2 L", "10 M": a unit
    ]
    for match in _SAID_SIZE.finditer(text):
        found.extend(g.casefold() for g in match.groups() if g)
    return list(dict.fromkeys(found))


class CompoundWords:
    """The compounds of a catalogue's titles, to read an answer's words as the titles do:
    two words run together ("longhandle") as the title's two ("Long-Handle"), and two words
    apart or hyphenated ("quick-draws") as the title's one ("Quickdraw")."""

    def __init__(self):
        self.joined = {}  # "longhandle" -> ("long", "handle") of a title's two words
        self.singles = set()  # the titles' one-word compounds' candidates (all title words)
        self.pairs = set()  # the titles' pairs of words in a row, as stems ("brew maker")

    def add_title(self, title: str, words: frozenset[str] | set[str]) -> None:
        keys = [k for k in keys_of(title) if k.isalpha()]
        for first, second in zip(keys, keys[1:], strict=False):
            a, b = stem(first), stem(second)
            self.pairs.add((a, b))
            if a in words and b in words and min(len(first), len(second)) >= MIN_COMPOUND_PART:
                self.joined[stem(first + second)] = (a, b)
        self.singles |= {word for word in words if len(word) >= 2 * MIN_COMPOUND_PART}

    def read(self, text: str | None, present: set[str]) -> set[str]:
        """``present`` (the words of ``text``) with the titles' spellings of its compounds."""
        out = set(present)
        for word in present:
            out.update(self.joined.get(word, ()))
        keys = [k for k in keys_of(text) if k.isalpha()]
        for first, second in zip(keys, keys[1:], strict=False):
            if min(len(first), len(second)) < MIN_COMPOUND_PART:
                continue
            joined = stem(first + second)
            if joined in self.singles:
                out.add(joined)
        return out

    def split_keys(self, keys: list[str]) -> list[str]:
        """``keys`` with each one that runs a title's two words together ("brushpens" of
        "Brush Pens") as those two, in place."""
        out = []
        for key in keys:
            parts = self.joined.get(stem(key))
            out.extend(parts if parts else (key,))
        return out

    def fold(self, text: str | None, words: set[str]) -> set[str]:
        """``words`` (of ``text``) with each compound of the titles written apart or
        hyphenated ("Quick-Draws") as the titles' one word, its parts dropped, and one
        written joined ("Doublesided") as the titles' two ("Double-Sided")."""
        out = set(words)
        for word in words:
            if word in self.joined:
                out = (out - {word}) | set(self.joined[word])
        keys = [k for k in keys_of(text) if k.isalpha()]
        for first, second in zip(keys, keys[1:], strict=False):
            joined = stem(first + second)
            if min(len(first), len(second)) >= MIN_COMPOUND_PART and joined in self.singles:
                out -= {stem(first), stem(second)}
                out.add(joined)
        return out


def says_kind(word: str, kind: str) -> bool:
    """True when the stem ``word`` says the kind ``kind``: the same, or the last part of a
    compound ("pack" of "backpack" and "daypack", "lamp" of "headlamp")."""
    return word == kind or (len(word) >= KIND_TAIL_MIN and kind.endswith(word))


def name_words(text: str) -> set[str]:
    """The words of a name that tell products apart, its sizes and numbers aside ("30-litre
    Ridgeway", "20cm" say a size, which ``sizes_of`` compares), and its size letters and
    codes aside too (a unit cut from its number, "W GaN", reads as one)."""
    text = SIZE.sub(" ", text)
    return {word for word in words_of(text) if word.isalpha()} - set(size_letters(text))
