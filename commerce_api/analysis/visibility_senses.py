"""A variant's word said in another sense (round 17 of issue 30): the colour or size that
would single out one of two variants, said of something else in the same sentence.

- An amount of something else is not the product's size: "budget about 60 cm of loom waste"
  (an amount followed by "of" and a word no title of the shop has), "drop them 50 mm lower
  than you think" (a difference: an amount before a comparative), "my first 2 reels took
  twenty minutes" (a count after an ordinal).
- A title word after "your" or "my" is the reader's own thing, not ours: "keep your pedals
  flat" of our "Flat Pedals", "fit a camera on your kingpost" of our "Kingpost Camera Mount"
  (round 30); unless our title has it after "for", what the product serves ("holds all my
  discs" of our "Shoulder Pack for 18 Discs").
- A number before a plural no title of the shop has counts other things, and picks out no
  variant: "I've used their bobbins for 24 years" of our "Bobbins, Pack of 24" (round 31).
- A colour that names or qualifies another thing is not the product's colour: "a raspberry
  hot chocolate" (after an article, before a word no title has), "over a mocha from the
  café" (after an indefinite article, the noun of its own phrase).
"""

import re
from collections.abc import Container, Sequence

from .listing_referents import FUNCTION_WORDS
from .listing_title import STOPWORDS, stem, word_set
from .visibility_sizes import NUMBER, SIZE, WORD_NUMBER
from .visibility_words import COLOUR_STEMS, keys_of

COMPARATIVES = word_set(
    "lower higher longer shorter wider narrower thicker thinner bigger smaller larger deeper "
    "shallower taller heavier lighter more less further farther closer tighter looser"
)
_ORDINALS = word_set("first last next previous")
_SIZE_WORDS = word_set("size no number grade gauge")
_ARTICLES = word_set("a an the some my your his her our their")
_INDEFINITE = word_set("a an")
# nouns that a colour may qualify and still be the product's ("the raspberry one")
_VARIANT_NOUNS = word_set(
    "one ones colour color colourway colorway version variant option finish shade edition "
    "model pack roll pair set"
)
# words after a colour that make it the subject of its clause ("the red is bright")
_VERBS = word_set("is are was were looks look has have comes come works goes suits fades")
_PARTS = re.compile(r"[,;:.!?()\[\]|\u2013\u2014]|\s-\s")
_WORDS_AFTER = re.compile(r"[\s\-]+([^\W\d_]+(?:[ \t]+[^\W\d_]+)*)")
_NUMBER_AT = re.compile(r"(?<![\w.,])" + NUMBER + r"(?![\w.,])")
_ORDINAL_BEFORE = re.compile(r"\b(?:" + "|".join(sorted(_ORDINALS)) + r")\s+$", re.IGNORECASE)


def _other_amount(text: str, end: int, holding: Container[str]) -> bool:
    """True when the amount ending at ``end`` is of something else ("60 cm of loom
    waste": a word after "of", before the next stop word or mark, that no title has) or a
    difference ("50 mm lower")."""
    after = _WORDS_AFTER.match(text, end)
    if after is None:
        return False
    words = after.group(1).casefold().split()
    if words[0] in COMPARATIVES:
        return True
    phrase = []
    for word in words[1:4] if words[0] == "of" else ():
        if word in STOPWORDS:
            break
        phrase.append(word)
    return any(stem(word) not in holding for word in phrase)


PACKAGING = _PACKAGING = word_set(
    "bag bags cone cones tub tubs box boxes tin tins jar jars bottle bottles pouch sack sacks "
    "carton cartons can cans tube tubes packet packets bucket buckets drum drums hank skein "
    "spool reel case card cards spools reels roll rolls coil coils"  # "a 5 m card" (round 48)
)
_ARTICLE_AT_END = re.compile(r"\b(?:a|an|the|my|your|his|her|their|this|that)\s+$", re.IGNORECASE)
# what an amount says of the product itself: "the 12 in length" (round 40)
_SIZE_NOUNS = word_set(
    "length lengths size sizes width widths height heights depth diameter gauge weight "
    "capacity thickness version versions"
)


def _qualifies_other(text: str, start: int, end: int, holding: Container[str]) -> bool:
    """True when the amount at ``start:end`` comes after an article or "my" and qualifies
    words no title of the shop has: "a 4 kg medicine ball", "with a 60 cm gap above" (round
    35), "with the 12 in ruler" (round 40); not "a 90 cm one", "the 12 in length", nor a
    container of something ("a 500 g bag of ...")."""
    after = _WORDS_AFTER.match(text, end)
    if after is None or _ARTICLE_AT_END.search(text, 0, start) is None:
        return False
    words = keys_of(after.group(1))
    if words[0] in _VARIANT_NOUNS or words[0] in STOPWORDS or words[0] in _SIZE_NOUNS:
        return False
    run = words[: words.index(_head(words, 0)) + 1]
    if words[len(run) : len(run) + 1] == ["of"] or _PACKAGING.intersection(run):
        return False  # what holds the product: "in a 5 kg bag", "as a 200 g cone"
    return not any(stem(word) in holding for word in run)


def without_other_amounts(text: str, holding: Container[str]) -> str:
    """``text`` with the amounts said of something else blanked out (module docstring);
    ``holding``: the stems of the shop's title words."""
    spans = [
        size.span()
        for size in SIZE.finditer(text)
        if _other_amount(text, size.end(), holding)
        or _ORDINAL_BEFORE.search(text, 0, size.start())
        or _qualifies_other(text, size.start(), size.end(), holding)
    ]
    spans += [
        number.span()
        for number in _NUMBER_AT.finditer(text)
        if _ORDINAL_BEFORE.search(text, 0, number.start())
    ]
    spans += [  # "my size 7 bangles" (round 40)
        named.span()
        for named in WORD_NUMBER.finditer(text)
        if named.group(1).casefold() in _SIZE_WORDS
        and _qualifies_other(text, named.start(), named.end(), holding)
    ]
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def colours_of_other_things(
    text: str,
    holding: Container[str],
    brand: Container[str],
    variants: Container[str] = frozenset(),
) -> set[str]:
    """The colour stems of ``keys`` said only of other things (module docstring): after
    an article, before a significant word no title of the shop has ("a raspberry hot
    chocolate"), or after an indefinite article with no word after them ("a mocha from
    the café"), in the part of the sentence between its punctuation. A colour said once of
    the product too is kept. ``variants``: the words that set a variant of the shop apart
    (``variant_words``), read as colours, and before a word no title has at the start of
    a part or after "in" or "with" too ("a flax field", "wrap it in flax twine",
    "strict: heliotrope kilt hose"; round 31)."""
    other, own = set(), set()
    for part in _PARTS.split(text):
        _read_colours(keys_of(part), holding, brand, other, own, variants)
    return other - own


_ALSO_BEFORE = word_set("in with")


def _read_colours(keys, holding, brand, other, own, variants):
    for index, key in enumerate(keys):
        colour = stem(key)
        variant = colour in variants
        if colour not in COLOUR_STEMS and not variant:
            continue
        before = keys[index - 1] if index else None
        after = keys[index + 1] if index + 1 < len(keys) else None
        if before not in _ARTICLES:
            also = variant and (before is None or before in _ALSO_BEFORE)
            # (a variant's word after "in" before another thing's two-word name: "wrap them
            # in woad tissue paper"; not "in charcoal hides stains"; round 40)
            other_name = also and _other_name_after(keys, index, holding, brand)
            (other if other_name else own).add(colour)
            continue
        if after is None or after in STOPWORDS or not after.isalpha():
            (other if before in _INDEFINITE else own).add(colour)
            continue
        noun, head = stem(after), stem(_head(keys, index + 1))  # "an amaranth silk scarf"
        ours = noun in holding or noun in brand or noun in COLOUR_STEMS
        ours = ours and (head in holding or head in brand or head in (noun, "one"))  # (round 35;
        # "the manganese violet one": round 51)
        held = after in _VARIANT_NOUNS | _VERBS | _PACKAGING  # "the glaucous bag of <brand> sand"
        (own if ours or held else other).add(colour)


_ADVERBS = word_set("well together apart best better alone")


def _other_name_after(keys, index, holding, brand):
    two = keys[index + 1 : index + 3]
    return (
        len(two) == 2
        and not two[0].endswith("s")
        and all(
            word.isalpha()
            and word not in STOPWORDS | _VERBS | _VARIANT_NOUNS | _ADVERBS | FUNCTION_WORDS
            and not word.endswith("ly")
            and stem(word) not in holding
            and stem(word) not in brand
            for word in two
        )
    )


def _head(keys: Sequence[str], start: int) -> str:
    """The last of the words from ``start`` before a stop word, a verb or a number (at
    most two): the noun a colour or an amount qualifies."""
    end, last = start, min(len(keys), start + 2)
    while end < last and keys[end].isalpha() and keys[end] not in STOPWORDS | _VERBS:
        end += 1
    return keys[end - 1]


_READERS = word_set("your my")


def served_words(title_keys: Sequence[str]) -> set[str]:
    """The stems of the words a title has after "for": what the product serves ("Candler
    for Small Eggs")."""
    served = set()
    for index, key in enumerate(title_keys):
        if key == "for":
            served |= {stem(word) for word in title_keys[index + 1 :]}
    return served


def readers_own(keys: Sequence[str], title_keys: Sequence[str]) -> set[str]:
    """The stems of the words of ``keys`` (a unit's) said after "your" or "my" (module
    docstring), but those our title (``title_keys``) has after "for"."""
    served = served_words(title_keys)
    return {
        stem(key) for before, key in zip(keys, keys[1:], strict=False) if before in _READERS
    } - served


_COUNTED = re.compile(r"(?<![\w.,])(?<!the )(\d+)[ \t\-]+([^\W\d_]{3,}s)\b", re.IGNORECASE)
_MEASURES = word_set("sizes colours colors models versions options styles types kinds variants")


def counts_of_other_things(text: str, holding: Container[str]) -> set[str]:
    """The numbers of ``text`` said before a plural of a word no title of the shop has
    (``holding``: the stems of its title words; module docstring)."""
    return {
        match.group(1)
        for match in _COUNTED.finditer(text)
        if (word := match.group(2).casefold()) not in _MEASURES
        and stem(word) != word
        and stem(word) not in holding
    }
