"""The phrases a text says and the words it says on their own, for keyword suggestions
(``listing_keywords``): runs of up to ``MAX_PHRASE`` usable words, without those after a
negation in their clause, hedged ("if", "would": ``listing_clauses``) or said of another
thing (``listing_referents``); and the materials, which exclude one another. Moved out of
``listing_keywords`` unchanged when that module reached its size limit (round 17)."""

import re
from collections.abc import Callable

from .listing_clauses import hedged_clauses
from .listing_referents import (
    CLAUSE_END,
    DEGREE,
    PHRASE_TOKEN,
    another_thing,
    cached_stem,
    phrase_words,
    usable,
)
from .listing_title import stem, unpromoted_tokens, word_set

MAX_PHRASE = 3  # words in a suggested phrase
_PHRASE_TOKEN = PHRASE_TOKEN
_CLAUSE_END = CLAUSE_END
_phrase_words = phrase_words
_stem = cached_stem
_usable = usable
# What a thing is made of excludes the others: a title that names its material is never
# offered another one, and one that names none only the material nearly every
# neighbour shares.
MATERIALS = word_set(
    "ceramic porcelain stoneware earthenware enamel steel stainless iron aluminium aluminum "
    "copper brass bronze pewter zinc nickel silver gold titanium glass crystal plastic "
    "acrylic silicone rubber "
    "bamboo wood wooden oak walnut beech pine acacia cotton linen wool merino cashmere "
    "alpaca silk polyester nylon velvet leather suede canvas jute hemp soy beeswax paraffin "
    "paper cardboard cork foam marble stone concrete slate"
)
MATERIAL_STEMS = frozenset(stem(word) for word in MATERIALS)

# words that make the phrase after them not quite the term ("non stick", "semi cordless",
# "nearly silent", "faux leather" of "leather"; round 13 beside round 7's "non")
NOT_QUITE = word_set("non semi almost nearly quasi pseudo faux mock")
NEGATIONS = word_set(
    "not no without never nor non isn aren doesn lacks lack lacking neither none instead "
    "rather unlike than cannot t"
)


def phrases_of(
    text: str | None,
    negated: bool = True,
    of_part: Callable[[list, int, int], bool] | None = None,
) -> dict[tuple[str, ...], str]:
    """``{phrase: spelling}``: the runs of one to ``MAX_PHRASE`` usable words of ``text``
    (stems), none a stop, colour or promotional word, a lone word of 3+ letters;
    ``negated=False`` leaves out the runs after a negation in their clause, those of a
    clause with a condition or a modal ("if", "would": ``listing_clauses``) and those said
    of another thing (``listing_referents.another_thing``); ``of_part(words, start,
    end)``, when given, tells the runs said of a part (left out where they are)."""
    words = _phrase_words(text)
    other_thing = another_thing(words) if not negated else ()
    found = {}
    hedged = hedged_clauses(words, text) if not negated else ()
    denied = False  # a negation earlier in the clause
    for start, word in enumerate(words):
        earlier = denied and word is not None and not _turns(words, start)
        denied = earlier or (word in NEGATIONS and word != "non")
        if not _usable(word):
            continue
        if not negated and (earlier or start in hedged or words[start - 1] in NOT_QUITE):
            continue
        if start in other_thing:
            continue
        for end in range(start + 1, min(start + MAX_PHRASE, len(words)) + 1):
            if not _usable(words[end - 1]) or end - 1 in other_thing:
                break
            run = words[start:end]
            if len(run) == 1 and (len(run[0]) < 3 or not run[0].isalpha()):
                continue
            if of_part is not None and of_part(words, start, end):
                continue
            phrase = tuple(_stem(w) for w in run)
            found.setdefault(phrase, " ".join(run))
    return found


_PROPERTY_ENDINGS = ("ed", "able", "ible", "proof", "less", "ive", "ant", "ent", "ful", "ous", "ic")


def _turns(words, index):
    """True when ``words[index]`` ends a negation: "but" ("not X but Y"; round 13), or "and"
    before a new noun phrase ("No cable to tangle, and a presta adaptor ..."; round 16)."""
    word = words[index]
    if word == "but":
        return True
    following = words[index + 1] if index + 1 < len(words) else None
    return (
        word == "and"
        and following is not None
        and (following in _NEW_PHRASE or following.isdigit())
    )


_NEW_PHRASE = word_set("a an the it its this there")


def property_word(word: str) -> bool:
    """True when ``word`` reads as a property of a thing (an adjective by its ending:
    "padded", "washable", "waterproof", "wireless"), not a material or a thing."""
    return len(word) >= 5 and word.endswith(_PROPERTY_ENDINGS) and _stem(word) not in MATERIAL_STEMS


# words before a noun that start no longer name: the present of "to have", determiners and
# counts spelt out ("it has tines", "sixty tines"; not "was led by", "the old model had")
_NOT_A_NAME = word_set(
    "has have with its their our your this these those all both two three four five six "
    "seven eight nine ten eleven twelve twenty thirty forty fifty sixty hundred several many"
)


_LETTER_SHAPE = re.compile(r"[B-HJ-Z]")  # a capital letter alone, not "A" or "I"


def standalone_words(
    text: str | None, known: set[tuple[str, ...]] | frozenset, title: set[str] | frozenset
) -> set[str]:
    """The stems of the words of ``text`` said on their own at least once: not joined by a
    hyphen to a neighbour ("on-ear", "13-inch"), not a unit after a number ("13 inch"), not
    a part of a ``known`` two-word phrase beside it ("memory foam"), not said of another
    part of the product (followed by a word the ``title`` stems lack: "stainless lid",
    "coffee seriously"), and not the head of a longer name (after such a word: "outer
    cover"); a property (``property_word``) only needs not to come before a material."""
    alone = set()
    for clause in _CLAUSE_END.split(" ".join(unpromoted_tokens(text))):
        tokens = list(_PHRASE_TOKEN.finditer(clause))
        for index, match in enumerate(tokens):
            word = match.group().casefold()
            prev = tokens[index - 1] if index else None
            after = tokens[index + 1] if index + 1 < len(tokens) else None
            if prev is not None and clause[prev.end() : match.start()] == "-":
                continue
            if after is not None and clause[match.end() : after.start()] == "-":
                continue
            if (
                prev is not None
                and prev.group().isdigit()
                and not clause[prev.end() : match.start()].strip()
            ):
                continue  # a unit after its number ("13 inch"), not "100% cotton"
            if prev is not None and _LETTER_SHAPE.fullmatch(prev.group()):
                continue  # a letter's shape names it: "a D grip", "the T handle" (round 50)
            here = _stem(word)
            before = _stem(prev.group().casefold()) if prev is not None else None
            next_word = after.group().casefold() if after is not None else None
            if next_word in DEGREE:
                next_word = None  # "compact enough": no noun follows
            if prev is not None and prev.group().casefold() in DEGREE:
                prev = None  # "the most compact umbrella"
            if prev is not None and prev.group().casefold() in _NOT_A_NAME:
                prev = None  # "it has tines", "sixty tines" (round 43)
            next_stem = _stem(next_word) if next_word is not None else None
            if property_word(word):
                # a property ("padded", "wireless") may stand before any noun, but not
                # before a material of another part ("padded stainless clasp" of a
                # leather sleeve)
                materials = title & MATERIAL_STEMS
                if not (materials and next_stem in MATERIAL_STEMS - materials):
                    alone.add(here)
                continue
            if (before, here) in known or (here, next_stem) in known:
                continue
            if next_word is not None and _usable(next_word) and next_stem not in title:
                continue
            if prev is not None and _usable(prev.group().casefold()) and before not in title:
                continue  # the head of a longer name ("egg crate foam", "outer cover")
            alone.add(here)
    return alone


_DIGITS = re.compile(r"\d+")


def numbered_phrases(text: str | None) -> dict[tuple[str, ...], str]:
    """``{phrase: number}``: the runs of one to ``MAX_PHRASE`` usable words (stems) said
    right after a number in ``text`` ("10-Year Battery": ``("year",)`` and ``("year",
    "battery")`` after "10"; round 18)."""
    words = _phrase_words(text)
    found = {}
    for start, word in enumerate(words):
        if word is None or not _DIGITS.fullmatch(word):
            continue
        for end in range(start + 2, min(start + 1 + MAX_PHRASE, len(words)) + 1):
            if not _usable(words[end - 1]):
                break
            found.setdefault(tuple(_stem(w) for w in words[start + 1 : end]), word)
    return found
