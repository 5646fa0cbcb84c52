"""Sizes and numbers in product titles and answers (``visibility_match``): "500 g", "70 x 90
cm", "40 by 30 cm", "10,000 mAh", "24 or 28 cm", and the number a word carries ("SPF 50",
"Size 02"). Two sizes in one unit compare by their amounts, thousands separators aside."""

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from .listing_keywords import COLOURS
from .listing_title import PROMOTIONAL_WORDS, STOPWORDS, stem, word_set

# a size of a variant: "500 g", "1.5 L", "70 x 90 cm", "40 by 30 cm", "45-litre", "65W",
# "10,000 mAh" (numbers and unit, case aside)
NUMBER = r"(?:\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d.,])|\d+(?:[.,]\d+)*)"
SIZE = re.compile(
    # (not a scale's "1:24", nor "24 in the garden": round 29)
    r"(?<![\w.,:])(" + NUMBER + r"(?:\s*(?:[x\u00d7]|\bby\b)\s*" + NUMBER + r")*)[\s\-]*"
    r"(millimet(?:re|er)s?|centimet(?:re|er)s?|millilit(?:re|er)s?|kilograms?|grams?|watts?|"
    r"met(?:re|er)s?|ml|cl|l|litres?|liters?|g|kg|cm|mm|m|oz|inch(?:es)?|in(?!\s+(?:the|a|an|my|our|your|his|her|their|this|that)\b)|\"|mah|wh|w|kw|v|"
    r"lumens?|lm|kb|mb|gb|tb|hz|khz|mhz|ghz|kwh|mg|psi|mp|lbs?|pounds?|ft|feet|foot|km)(?![\w])",
    re.IGNORECASE,
)
# a number a word of the title carries: "SPF 50", "Trailhead 2-Person", "Cable 1 m": an
# answer giving that word another number speaks of another product
WORD_NUMBER = re.compile(
    r"(?<![\w\-])([^\W\d_]{2,}|(?i:no|nr|vol|mk|gen)\.)[ \t]?(" + NUMBER + r")(?![.,]?\d)"
    r"(?!\s*[x\u00d7]\s*\d)"  # not the first number of a dimension ("Binoculars 8x42")
)
# a dimension without a unit ("8x42" binoculars, "20-60x80" scope; round 18): one size,
# ``{"#x": {"8x42"}}``
DIMENSION = re.compile(
    r"(?<![\w.,])(\d+(?:[.,]\d+)?\s*[x\u00d7]\s*\d+(?:[.,]\d+)?)(?![\w.,]|\s*[x\u00d7])"
)
# an amount listed before a size, sharing its unit ("24 or 28 cm", "500, 750 ml"); a slash
# lists only with a space beside it: "8/0" and "1/8 in" are one size each (round 12), and
# the number after a slash is not listed: "18/3, 50 m" is 50 m (round 48)
_LISTED_BEFORE = re.compile(
    r"(?<![\w.,/])(?<!of )(?<!x )(\d+(?:[.,]\d+)?)\s*(?:,|\s/|/\s|\bor\b|\band\b)\s*$"
)
# ... and before a count of a word ("the 70 and the 80 durometer"; round 20; "of 10 and of
# 20 sheets": round 30)
_COUNTS_BEFORE = re.compile(
    r"(?<![\w.,])(\d+(?:[.,]\d+)?)\s*(?:,|\s/|/\s|\bor\b|\band\b)\s*(?:the\s+|of\s+)?$"
)
_LISTED_AFTER = re.compile(
    r"\s*(?:,|(?<=\s)/|/(?=\s)|\bor\b|\band\b)\s*(\d+(?:[.,]\d+)?)(?!\w|[.,]\d)"
)
_UNITS = {
    "lbs": "lb",
    "pound": "lb",
    "pounds": "lb",
    "litre": "l",
    "litres": "l",
    "liter": "l",
    "liters": "l",
    '"': "in",
    "feet": "ft",
    "foot": "ft",
    "lumens": "lumen",
}
# units compared in another one: litres in millilitres, kilograms in grams ("1 L" is "1000
# ml"); lengths keep their units: a rope's "9.8 mm" and "60 m" are two dimensions
_BASE_UNITS = {"l": ("ml", 1000), "cl": ("ml", 10), "kg": ("g", 1000)}
_UNIT_WORDS = {  # a unit spelled out ("100-watt", "32-millimetre"): its symbol
    "millimet": "mm",
    "centimet": "cm",
    "millilit": "ml",
    "kilogram": "kg",
    "gram": "g",
    "watt": "w",
    "met": "m",
}
# sizes a product comes in: "in 24 or 28 cm", "sizes 24, 28"
SIZE_OPTIONS = re.compile(
    r"\b(?:in|sizes?)\s+\d[\d.,]*\s*[^\W\d_]*\s*(?:,|/|\bor\b|\band\b)\s*\d", re.IGNORECASE
)
_BOTH = re.compile(r"\b(?:both|each)\b", re.IGNORECASE)
# the parts of a sentence at its commas, semicolons and colons
PART_SPLIT = re.compile(r"[,;:]\s+")
# a count before a word of the title: "with 18 Compartments", "24 Pieces" (another count
# of that word is another product)
NUMBER_WORD = re.compile(r"(?<![\w.,\-])(" + NUMBER + r")(?:[ \t]+|-)([^\W\d_]{3,})\b")
_NOT_NUMBER_WORDS = STOPWORDS | PROMOTIONAL_WORDS | frozenset(["x", "by"])
# how many come in one product: "Set of 6", "Pack of 10", "3-Pack", "pack of six" (round 7 of
# issue 30): ``{"#count": {"6"}}``; another count, or a count our title lacks said after our
# words ("<brand> Keylock Quickdraw Pack of 6" of our single quickdraw), is another product
COUNT = "#count"
NUMBER_WORDS = dict(
    zip(
        [
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ],
        map(str, range(1, 13)),
        strict=True,
    )
)
_COUNT_NUMBER = r"(\d{1,4}|" + "|".join(NUMBER_WORDS) + ")"
_COUNT_LISTED = re.compile(r"\s*(?:,|/|\bor\b|\band\b)\s*(?:of\s+)?" + _COUNT_NUMBER + r"\b", re.I)
_COUNTS = (
    re.compile(r"\b(?:pack|set|box|case|bundle|tin|bag)s?\s+of\s+" + _COUNT_NUMBER + r"\b", re.I),
    # (not "two packs": how many packs; round 31)
    re.compile(r"(?<![\w.,])" + _COUNT_NUMBER + r"[\s\-]*(?:pack|pk)\b", re.I),
)


# an amount spelled out before a unit ("a half-litre bottle", "one-litre", "a hundred and
# sixty centimetres"; rounds 11 and 12 of issue 30), or after "size" ("Size Three")
_ONES = dict(
    zip(
        re.split(
            " ",
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen",
        ),
        range(20),
        strict=True,
    )
)
_TENS = dict(
    zip(
        re.split(" ", "twenty thirty forty fifty sixty seventy eighty ninety"),
        range(20, 100, 10),
        strict=True,
    )
)
_NUMBER_WORD = "|".join([*_TENS, *sorted(_ONES, key=len, reverse=True), "hundred", "thousand"])
_SPELLED_NUMBER = r"(?:(?:a|and|" + _NUMBER_WORD + r")[\s\-]+)*(?:" + _NUMBER_WORD + r")\b"
_SPELLED_UNIT = (
    r"(?:lit(?:re|er)|met(?:re|er)|centimet(?:re|er)|millimet(?:re|er)|millilit(?:re|er)"
    r"|kilogram|gram|pound|ounce|inch|gallon)s?\b|inches\b|foot\b|feet\b|(?:cm|mm|ml|kg|oz)\b"
)
_SPELLED_SIZE = re.compile(
    r"\b(half|" + _SPELLED_NUMBER + r")[\s\-]+(?=" + _SPELLED_UNIT + ")", re.IGNORECASE
)
# a count spelled out before a word ("four-reel tank", "with Two Bobbins"; not "one")
_SPELLED_COUNT = re.compile(
    r"\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)[\s\-]+([^\W\d_]{3,})\b",
    re.IGNORECASE,
)
# what a spelled count of says nothing of one product ("in two sizes", "two pairs of")
_GENERIC_COUNTED = (
    frozenset(
        stem(word)
        for word in word_set(
            "size colour color pair way version option model type kind variant time day week "
            "month year hour minute second step thing ones other others more sizes colours "
            "colors pairs ways versions options models types kinds variants times days weeks "
            "months years hours minutes seconds steps things"
        )
    )
    | _NOT_NUMBER_WORDS
)
# a count of pieces ("500 Pieces", "the 1000-piece jigsaw", "24 pcs"): "piece" is a stop
# word, so ``NUMBER_WORD`` leaves it; another count of pieces is another product (round 24)
_PIECES = re.compile(r"(?<![\w.,\-])(\d{1,5})[ \t]*-?[ \t]*(?:pieces?|pcs?)\b", re.IGNORECASE)
PIECES = "#>piece"
# a scale ("Cutter Kit 1:64", "at 1/48 scale"): another scale is another product (round 28)
_SCALE = re.compile(r"(?<![\w.,:/])1\s*[:/]\s*(\d{1,4})(?![\w.,:/])")
SCALE = "#scale"
_SPELLED_SIZE_NUMBER = re.compile(r"\b(size)[\s\-]+(" + _SPELLED_NUMBER + ")", re.IGNORECASE)


def _spelled(words):
    """The number ``words`` spell ("a hundred and sixty": "160"; "half": "0.5")."""
    if words.casefold() == "half":
        return "0.5"
    total, current = 0, 0
    for word in re.split(r"[\s\-]+", words.casefold()):
        if word in _ONES or word in _TENS:
            current += _ONES.get(word, _TENS.get(word, 0))
        elif word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total, current = total + (current or 1) * 1000, 0
    return str(total + current)


def spelled_out(text: str) -> str:
    """``text`` with the sizes it spells out in digits (``_SPELLED_SIZE``)."""
    text = _SPELLED_SIZE.sub(lambda m: _spelled(m.group(1)) + " ", text)
    return _SPELLED_SIZE_NUMBER.sub(lambda m: f"{m.group(1)} {_spelled(m.group(2))}", text)


def _amount(text):
    """A number as compared: thousands separators dropped ("10,000" is "10000"), a decimal
    comma a point."""
    text = text.replace("\u00d7", "x")
    parts = re.split(r"\s*(?:x|\bby\b)\s*", text.casefold())
    out = []
    for part in parts:
        if re.fullmatch(r"\d{1,3}(?:[., \u00a0\u202f]\d{3})+", part):
            part = re.sub(r"[., \u00a0\u202f]", "", part)
        out.append(part.replace(",", "."))
    return "x".join(out)


def sizes_of(text: str | None) -> dict[str, set[str]]:
    """``{unit: {amounts}}`` of the sizes ``text`` says ("70 x 90 cm": ``{"cm": {"70x90"}}``;
    "half-litre" and "one-litre" are 0.5 and 1 litre), and ``{"#word": {numbers}}`` of the
    numbers said right after a word ("SPF 50": ``{"#spf": {"50"}}``)."""
    sizes: dict[str, set[str]] = {}
    text = spelled_out(text or "")
    for match in SIZE.finditer(text):
        amount, unit = match.groups()
        unit = unit.casefold()
        unit = _UNITS.get(unit, unit)
        unit = next((v for k, v in _UNIT_WORDS.items() if unit.startswith(k)), unit)
        unit = "in" if unit.startswith("inch") else unit
        sizes.setdefault(unit, set()).add(_amount(amount))
        before = text[: match.start()]
        while listed := _LISTED_BEFORE.search(before):  # "24 or 28 cm": 24 cm as well
            sizes[unit].add(_amount(listed.group(1)))
            before = before[: listed.start()]
    for match in DIMENSION.finditer(SIZE.sub(" ", text)):
        sizes.setdefault("#x", set()).add(_amount(match.group(1)))
    for match in WORD_NUMBER.finditer(text):
        word = match.group(1).casefold().rstrip(".")  # "No. 4" as "No 4"
        if word not in _NOT_NUMBER_WORDS:
            numbers = sizes.setdefault("#" + stem(word), set())
            numbers.add(_amount(match.group(2)))
            after = text[match.end() :]
            while listed := _LISTED_AFTER.match(after):  # "size 01 and 02": 02 as well
                numbers.add(_amount(listed.group(1)))
                after = after[listed.end() :]
    for pattern in _COUNTS:
        for match in pattern.finditer(text):
            number = match.group(1).casefold()
            sizes.setdefault(COUNT, set()).add(NUMBER_WORDS.get(number, number))
            after = text[match.end() :]
            while listed := _COUNT_LISTED.match(after):  # "packs of 6 and of 12"
                number = listed.group(1).casefold()
                sizes[COUNT].add(NUMBER_WORDS.get(number, number))
                after = after[listed.end() :]
    unsized = SIZE.sub(" ", text)
    for match in NUMBER_WORD.finditer(unsized):
        word = match.group(2).casefold()
        if word not in _NOT_NUMBER_WORDS and word not in COLOURS:
            numbers = sizes.setdefault("#>" + stem(word), set())
            numbers.add(_amount(match.group(1)))
            before = unsized[: match.start()]
            while listed := _COUNTS_BEFORE.search(before):  # "1000 and 6000 grit" (round 20)
                numbers.add(_amount(listed.group(1)))
                before = before[: listed.start()]
    for match in _PIECES.finditer(text):
        sizes.setdefault(PIECES, set()).add(match.group(1))
    for match in _SCALE.finditer(text):
        sizes.setdefault(SCALE, set()).add(match.group(1))
    for match in _SPELLED_COUNT.finditer(text):  # "four-reel", "Two Bobbins" (round 17)
        word = match.group(2).casefold()
        if stem(word) not in _GENERIC_COUNTED and word not in COLOURS:
            sizes.setdefault("#>" + stem(word), set()).add(_spelled(match.group(1)))
    return in_base_units(sizes)


def in_base_units(sizes: dict[str, set[str]]) -> dict[str, set[str]]:
    """``sizes`` with litres and centilitres in millilitres and kilograms in grams, so "1 L"
    and "500 ml" compare ("Cleaning Fluid, 1 L" is not our "Cleaning Fluid, 500 ml")."""
    out: dict[str, set[str]] = {}
    for unit, amounts in sizes.items():
        base, factor = _BASE_UNITS.get(unit, (unit, None))
        converted = amounts if factor is None else {_times(a, factor) for a in amounts}
        out.setdefault(base, set()).update(converted)
    return out


def as_given(amounts: set[str]) -> set[str]:
    """``amounts`` (in base units) and what they may have been written as: 5000 ml may be
    "5 L" (round 25: the 5 of "Carboy 5 L" is its size's number)."""
    return amounts | {
        _times(amount, Decimal(1) / factor)
        for amount in amounts
        for factor in {f for _, f in _BASE_UNITS.values()}
    }


def _times(amount, factor):
    try:
        parts = [Decimal(part) * factor for part in amount.split("x")]
    except InvalidOperation:
        return amount
    return "x".join(f"{part.normalize():f}" for part in parts)


def bare_numbers(text: str) -> set[str]:
    """The amounts of the numbers ``text`` says without a unit ("the 4000 size")."""
    return {_amount(m.group()) for m in re.finditer(NUMBER, SIZE.sub(" ", text))}


def title_numbers(sizes: dict[str, set[str]]) -> set[str]:
    """The numbers of a title's words ("Reel 4000", "with 18 Compartments")."""
    return {a for unit, amounts in sizes.items() if unit.startswith("#") for a in amounts}


def numbers_single_out(
    numbers: set[str], own: dict[str, set[str]], others: list[dict[str, set[str]]], options: bool
) -> bool:
    """True when the bare ``numbers`` of a unit say an amount of our title (``own`` sizes) that
    no other product of the same words has ("the 8.5 <brand> deck" of our "Deck 8.5 in"), or
    the unit says several such amounts, ours among them, one per variant ("the <brand>
    kettlebell in 12 and in 16"): each is named."""
    ours = numbers & amounts_of(own)
    if not ours or not all(amounts_of(other) for other in others):
        return False
    theirs = [numbers & amounts_of(other) for other in others]
    if not any(theirs):
        return True
    several = len(ours | set().union(*theirs)) > 1
    return bool(ours - set().union(*theirs)) and several and not options


def only_options(
    text: str, offered_in: Callable[[str, re.Pattern], bool], options: re.Pattern = SIZE_OPTIONS
) -> bool:
    """True when ``text`` says the sizes (or the colours: ``options``) a product is offered
    in (``offered_in``: "comes in size 01 and 02", "available in 24 or 28 cm") and not
    which of them it speaks of: "... comes in 25 L and 33 L; I own both" names both (round
    12: "comes in umber and mauve; I have both", "one of each"), as does "get the <brand>
    eyepiece in 25 mm and 10 mm"; round 24: "... come in 9 g and 17 g: the 9 g for the
    rudder", "... in cherry and slate; I own the cherry one": an option said again)."""
    return offered_in(text, options) and not _BOTH.search(text) and not _said_again(text, options)


_OPTION_WORDS = frozenset(["in", "size", "sizes", "and", "or", "of"])
_REST_OF_OPTION = re.compile(r"^[\d.,]*\s*[^\W\d_]*")  # "0 L" of "30 L" after the match


def _said_again(text: str, options: re.Pattern) -> bool:
    """True when an option of the options ``text`` lists (their numbers, or their words when
    they have none) is said again after the list."""
    for match in options.finditer(text):
        rest = _REST_OF_OPTION.match(text[match.end() :])
        listed = match.group() + rest.group()
        after = text[match.end() + rest.end() :]
        pattern = r"\d[\d.,]*" if re.search(r"\d", listed) else r"[^\W\d_]+"
        said = {w.casefold() for w in re.findall(pattern, listed)} - _OPTION_WORDS
        if said & {w.casefold() for w in re.findall(pattern, after)}:
            return True
    return False


def amounts_of(sizes: dict[str, set[str]]) -> set[str]:
    """Every amount of a title's sizes and numbers, and the factors of a dimension without a
    unit ("the 8x" of "Binoculars 8x42"; round 18)."""
    amounts = {amount for amounts in sizes.values() for amount in amounts}
    return amounts | {factor for a in sizes.get("#x", ()) for factor in a.split("x")}


def sizes_conflict(said: dict[str, set[str]], title: dict[str, set[str]]) -> bool:
    """True when ``said`` gives a size in a unit of ``title`` that ``title`` does not have."""
    return any(unit in title and not amounts & title[unit] for unit, amounts in said.items())


def sizes_agree(said: dict[str, set[str]], title: dict[str, set[str]]) -> bool:
    return any(amounts & title.get(unit, set()) for unit, amounts in said.items())


def spaced_number_words(title: str) -> set[str]:
    """The ``"#word"`` keys of ``title``'s numbers written apart from their word ("Size 02";
    not "model4340", a code)."""
    return {
        "#" + stem(m.group(1).casefold())
        for m in WORD_NUMBER.finditer(title)
        if title[m.end(1)] in " \t"
    }


# "the 30 L" said alone, a product of ours named by its size after another was named in full
# ("<brand>'s dry bag in 20 L suits a day trip, the 30 L a weekend"; round 13): the size is
# followed by no noun, only a word of this list, punctuation or the end
_ELLIPTICAL = re.compile(
    # ("and in 3.5 mm for the binding", "the 90 cm one in the shed", "and one 7.26 kg to
    # begin with"; round 35)
    r"\b(?:the|in|one)\s+\d[\d.,]*\s*[a-z]+(?=\s+(?:a|an|for|to|one)\b|\s*[,.;:!?)]|\s*$)",
    re.IGNORECASE,
)
_UNSURE = frozenset(["would", "could", "might", "should", "may", "need", "needs"])


def elliptical_sizes(clause: str) -> dict[str, set[str]]:
    """The sizes ``clause`` names alone ("the 30 L a weekend", "the 1500 mAh for
    freestyle"), unless it is unsure of them ("the 77 mm would need a step-up ring")."""
    if _UNSURE.intersection(word.casefold() for word in re.findall(r"\w+", clause)):
        return {}
    sizes: dict[str, set[str]] = {}
    for match in _ELLIPTICAL.finditer(clause):
        for unit, amounts in sizes_of(match.group()).items():
            if unit[:1] != "#":
                sizes.setdefault(unit, set()).update(amounts)
    return sizes


# "the larger of <brand>'s two packs", "the shorter one" (round 31), "the smaller bag"
# (round 33): of two variants that
# differ by an amount, the one with the larger or the smaller
_BIGGER = "larger bigger longer taller heavier wider thicker higher deeper"
_SMALLER = "smaller shorter narrower thinner lower shallower"
_COMPARED = re.compile(
    # (or a noun after it: "take the smaller bag"; round 33)
    r"\bthe\s+(" + "|".join((_BIGGER + " " + _SMALLER + " lighter").split()) + r")\s+[a-z]+\b",
    re.IGNORECASE,
)
_WEIGHTS = frozenset(["g", "kg", "lb", "oz"])


def compares(text: str) -> bool:
    """True when ``text`` picks one of several by a comparative ("the shorter of the two")."""
    return _COMPARED.search(text) is not None


def compared_pick(text: str, own: dict[str, set[str]], others: list[dict[str, set[str]]]) -> bool:
    """True when ``text`` picks the variant of sizes ``own`` out of ``others`` (the other
    products of its words) by a comparative: "the larger of the two" and ours the larger of
    an amount every one of them has once ("lighter": of a weight only, not of a colour)."""
    said = {match.group(1).casefold() for match in _COMPARED.finditer(text)}
    bigger, smaller = said & set(_BIGGER.split()), said & set(_SMALLER.split())
    if not others or len(said) != 1:
        return False
    for unit, amounts in own.items():
        if said == {"lighter"} and unit not in _WEIGHTS:
            continue
        theirs = [other.get(unit, set()) for other in others]
        if len(amounts) != 1 or any(len(values) != 1 for values in theirs):
            continue
        try:
            ours, rest = float(next(iter(amounts))), [float(next(iter(v))) for v in theirs]
        except ValueError:
            continue
        if (bigger and ours > max(rest)) or ((smaller or said == {"lighter"}) and ours < min(rest)):
            return True
    return False
