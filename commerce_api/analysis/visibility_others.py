"""Another brand's product inside a unit that names ours (round 6 of issue 30).

"For a first campaign: a Dicewold dice tower, the amethyst <brand> dice set" names our
brand, so the words of our titles count, and "dice tower" would credit our own dice
tower. A capitalised name (3+ letters) that is not ours nor a word of our titles, after a
determiner and before lower-case words ("a Dicewold dice tower", "my Oakmere walnut desk
pen stand"), or any such name in the possessive ("Summitco's folding camp
chair"), starts another brand's product: its words, up to the end of the phrase (a
punctuation mark, "and", "or", "but", or our brand), are not read as ours. A name that is
unsure (a place, a person) only costs a credit, never gives one.

Round 12: a name after a verb of getting or using one ("I bought Mallowby boot hooks at
the <brand> shop") starts another brand's product too. Our brand's name after a
capitalised word in the middle of a sentence is a
person's or another firm's ("my old teacher, Martha <brand>", "the potter Ada <brand>"),
not our brand (``without_people``).
"""

import functools
import re
from collections.abc import Callable

from .listing_phrases import MATERIAL_STEMS
from .listing_title import STOPWORDS, stem
from .visibility_sizes import NUMBER_WORDS
from .visibility_words import (
    CAPITALISED_NAME,
    COLOUR_STEMS,
    CompoundWords,
    keys_of,
    name_words,
    words_of,
)

_PERSON_BEFORE = r"(?<=[a-z0-9,;] )[A-Z][a-z]+\.?\s+"
_NOT_NAMES = frozenset(["The", "A", "An", "Our", "My", "Their", "Your", "This", "That", "I"])


@functools.lru_cache(maxsize=64)
def _person_then(brand):
    """The pattern of a capitalised word mid-sentence right before our ``brand``."""
    name = r"\W+".join(re.escape(token) for token in brand)
    return re.compile(_PERSON_BEFORE + r"(?i:" + name + r")\b")


def without_people(text: str, brand: tuple[str, ...]) -> str:
    """``text`` without our ``brand`` (its exact tokens) where a capitalised word in the
    middle of a sentence comes right before it (module docstring)."""
    if not brand:
        return text
    return _person_then(brand).sub(
        lambda m: m.group() if m.group().split()[0] in _NOT_NAMES else " ", text
    )


_TOKEN = re.compile(r"[^\W_][\w\-]*(?:['\u2019]s\b)?|[,;:.!?()\[\]\n\u2013\u2014]")
_PHRASE_END = frozenset(
    [",", ";", ":", ".", "!", "?", "(", ")", "[", "]", "\n", "\u2013", "\u2014"]
    + ["and", "or", "but", "while", "whereas", "yet", "than", "because", "so"]
)
# the words a brand's product follows ("a Dicewold dice tower", "my Oakmere pen stand")
_DETERMINERS = frozenset(
    ["a", "an", "the", "my", "your", "our", "their", "his", "her", "this", "that", "some"]
)
# ... or the verbs of getting or using one (round 12: "I bought Mallowby boot hooks at the
# <brand> shop", "I got Tarrowmere laces from ...")
_ACQUIRED = frozenset(
    ["bought", "buy", "got", "get", "ordered", "order", "own", "use", "used", "tried", "chose"]
)
_POSSESSIVE = re.compile(r"['\u2019]s$")
# "for the cape go to Visecraft: their grizzly hackle ..." (round 12): what follows "their"
# after another brand's name and a colon is that brand's, to the end of the sentence
_THEIRS = re.compile(r"((?<![\w&])([A-Z][\w\-]{2,})\s*:\s*)their\b[^.;!?\n]*")
# a quick look for either form before the text is cut into tokens
_MAYBE = re.compile(
    r"\b(?i:a|an|the|my|your|our|their|his|her|this|that|some|bought|buy|got|get|ordered|order"
    r"|own|use|used|tried|chose)\s+[A-Z]|\w['\u2019]s\b"
)


def without_other_names(
    text: str, is_other_name: Callable[[str], bool], brand_stems: frozenset
) -> str:
    """``text`` without the phrases that follow another brand's name (module docstring);
    ``is_other_name(word)`` tells a name that is not ours, ``brand_stems`` are the stems of
    our brand's name."""
    text = _THEIRS.sub(lambda m: m.group(1) if is_other_name(m.group(2)) else m.group(), text)
    if _MAYBE.search(text) is None:
        return text
    tokens = list(_TOKEN.finditer(text))
    cuts, index = [], 0
    while index < len(tokens):
        word = tokens[index].group()
        before = tokens[index - 1].group().casefold() if index else None
        determined = before in _DETERMINERS or before in _ACQUIRED
        possessive = _POSSESSIVE.search(word) is not None
        follows = index + 1 < len(tokens) and tokens[index + 1].group()[:1].islower()
        if (
            word[:1].isupper()
            and len(_POSSESSIVE.sub("", word)) >= 3
            and (possessive or (follows and determined))
            and is_other_name(word)
        ):
            end = index + 1
            while end < len(tokens):
                following = tokens[end].group()
                if following.casefold() in _PHRASE_END or _ours(following, brand_stems):
                    break
                end += 1
            # a possessive name stays, for the clause it is in to be known as another's
            first = index + 1 if possessive else index
            if first < end:
                cuts.append((tokens[first].start(), tokens[end - 1].end()))
            index = end
            continue
        index += 1
    for start, end in reversed(cuts):
        text = text[:start] + " " + text[end:]
    return text


def _ours(word, brand_stems):
    return stem(_POSSESSIVE.sub("", word).casefold()) in brand_stems


_CONNECTORS = frozenset(["with", "of", "and", "for", "in", "&"])


def names_in(
    text: str, brand_name: re.Pattern, compounds: CompoundWords, brand_stems: frozenset[str]
) -> list[set[str]]:
    """The significant words of each name in ``text`` that follows the brand (``brand_name``:
    the brand and the capitalised words after it) or stands in capitals of its own; none in
    a text written all in capitals, where capitals say nothing."""
    names = []
    if not any(char.islower() for char in text):
        return names
    for match in brand_name.finditer(text):
        run = match.group(1).split()
        while run and run[-1].casefold() in _CONNECTORS:
            run.pop()
        names.append(compounds.fold(" ".join(run), name_words(" ".join(run))))
    for match in CAPITALISED_NAME.finditer(text):
        run = match.group().split()
        if match.start() == len(text) - len(text.lstrip()):
            run = run[1:]  # the first word of a sentence is capitalised anyway
        name = compounds.fold(" ".join(run), name_words(" ".join(run))) - brand_stems
        if len(run) >= 2 and len(name) >= 2:
            names.append(name)
    return [name for name in names if name]


def type_named(text: str, brand_name: re.Pattern, found: frozenset[str], kinds: set) -> bool:
    """True when the one word of ``found`` follows the brand in capitals ("the 10 mm <brand>
    Plössl" of our "Plössl Eyepiece 10 mm") and the products holding it are all of one kind
    (``kinds``): a type's name, which says what the product is; not a material or a colour
    ("<brand> Foam"), nor said in the plural."""
    if len(found) != 1 or len(kinds) != 1 or None in kinds:
        return False
    if found & (MATERIAL_STEMS | COLOUR_STEMS):
        return False
    (word,) = found
    for match in brand_name.finditer(text):
        run = match.group(1).split()
        if run and run[0][:1].isupper() and words_of(run[0]) == [word]:
            key = keys_of(run[0])[0]
            # not in the plural: "<brand> Dobsonians hold collimation" are the brand's
            # (round 22)
            return stem(key) == key
    return False


# a code of a number and letters ("4S", "8X", "3D") and a hyphenated word ("Tri-Blade")
_CODE = re.compile(r"^(\d+)([a-z]+)$")


def _codes_and_compounds(name: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    codes, compounds = set(), set()
    for token in name.casefold().split():
        token = token.strip(",.;:()")
        if code := _CODE.match(token):
            codes.add((code.group(1), code.group(2)))
        elif "-" in token.strip("-"):
            first, _, head = token.rpartition("-")
            compounds.add((first, head))
    return codes, compounds


def renamed(text: str, brand_name: re.Pattern, title: str) -> bool:
    """True when a name after our brand in ``text`` has a code or a hyphenated word of
    another number or prefix than ``title``'s, with the same letters or head: "<brand> 6S
    LiPo Battery" is not our "4S LiPo Battery", "<brand> Bi-Blade Propellers" not our
    "Tri-Blade Propellers" (round 13 of issue 30)."""
    ours = _codes_and_compounds(title)
    for match in brand_name.finditer(text):
        said = _codes_and_compounds(match.group(1))
        for theirs, own in zip(said, ours, strict=True):
            if any(
                (first, last) not in own and any(o_last == last for _, o_last in own)
                for first, last in theirs
            ):
                return True
    return False


_AFTER_COMMA = re.compile(r"\s*,\s*([A-Z][\w\-]*)\b(?!\s*[,&]?\s*[A-Z])")
# ... or a part of a few capitalised words closed by a comma and a small word or by the
# sentence's end ("an Oil-Feed Glass Cutter, Straight Handle, which ..."; round 30), or by a
# number ("Grass Tufts, Early Spring, 120 Pieces" of our "..., Late Summer, ..."; round 55): not the
# next name of a list ("..., Running Pliers and ...")
_CLOSED_PART = re.compile(
    r"\s*,\s*([A-Z][\w\-]*)(?:\s+[A-Z][\w\-]*){1,2}"
    # (or by a lower-case word that is no "and": "Kit, Alpine Meadow is gentle"; round 33)
    r"(?=\s*(?:,\s*[a-z]|,\s*\d|[.!?;:)]|$)|\s+(?!(?:and|or|nor)\b)[a-z])"
)


def swapped_last_part(text: str, brand_name: re.Pattern, title: str) -> bool:
    """True when our brand is followed by our title up to its last comma, then a comma and
    a capitalised word our title lacks in place of its last part: "The <brand> Inflatable
    Snorkel Vest, Child" is not our "Inflatable Snorkel Vest, Adult" (round 18); or in place
    of any part after a comma ("Hay Rack, Free-Standing" of our "Hay Rack, Wall-Hung, 1.2 m":
    round 30)."""
    parts = title.split(",")
    title_stems = {stem(key) for key in keys_of(title)}
    return (
        _swapped_object(text, brand_name, title, title_stems)
        or _swapped_tail(text, brand_name, title, title_stems)
        or any(
            _swapped_part(text, brand_name, ",".join(parts[:cut]), parts[cut], title_stems)
            for cut in range(1, len(parts))
            if keys_of(parts[cut])
        )
    )


def _swapped_tail(text, brand_name, title, title_stems):
    """``_swapped_part`` at each word of our title after its first two that no comma ends:
    our brand, or nothing but Title Case, followed by our title's first words, then a comma
    and another name: "The <brand> Threaded Pommel, Featherweight" is not our "Threaded
    Pommel with Spanner" (round 43), nor "<brand> also sell the Felted Rod Pouch, Zipped" our
    "... with Drawstring" (round 46)."""
    words = title.split()
    return any(
        _swapped_part(text, brand_name, " ".join(words[:cut]), " ".join(words[cut:]), title_stems)
        for cut in range(2, len(words))
        if not words[cut - 1].endswith(",")
    )


_SERVING = frozenset(["for", "with"])


def _swapped_object(text, brand_name, title, title_stems):
    """True when a name after our brand has our title's words up to its last "for" or
    "with", then another word: "the <brand> Cypress Ladle for Ro" is not our "Cypress Ladle
    for Furo" (round 41; "Ro", a short word, is no title word to tell them apart)."""
    ours = keys_of(title)
    cut = max((i for i, key in enumerate(ours) if key in _SERVING), default=None)
    if cut is None or cut + 1 >= len(ours):
        return False
    for match in brand_name.finditer(text):
        said = keys_of(match.group(1))
        if (
            said[: cut + 1] == ours[: cut + 1]
            and len(said) > cut + 1
            and stem(said[cut + 1]) not in title_stems
        ):
            return True
    return False


def _swapped_part(text, brand_name, head, tail, title_stems):
    """``swapped_last_part`` of the part ``tail`` after our title's ``head``."""
    # after the brand, or anywhere in Title Case ("<brand> also make a Contact Hit Shield,
    # Straight" of our "Contact Hit Shield, Curved"; round 28)
    said = r"(?<!\w)" + r"\W+".join(re.escape(word) for word in head.split()) + r"(?!\w)"
    ends = [m.end() for m in brand_name.finditer(text) if _ends_head(m.group(1), head)]
    ends += [m.end() for m in re.finditer(said, text) if title_cased_words(m.group())]
    for end in ends:
        if _other_value(text, end, tail):
            return True  # "..., Size L" of our "..., Size M" (round 29)
        number = _NUMBER_AFTER_COMMA.match(text, end)  # "Gaff Cards, 24" of our "..., 12"
        if number and tail.strip().isdigit() and number.group(1) != tail.strip():
            return True  # (round 39)
        after = (
            _AFTER_COMMA.match(text, end)
            or _CLOSED_PART.match(text, end)
            or _inserted_before(text, end, tail)
        )
        word = after.group(1).casefold() if after is not None else None
        if word is not None and word not in STOPWORDS and stem(word) not in title_stems:
            return True
    return False


def _inserted_before(text, end, tail):
    """The match of a capitalised part put between our title's head and its ``tail``: "the
    <brand> Painted Willow Basket, Large, Massicot" of our "Painted Willow Basket, Massicot"
    (round 50)."""
    if not tail.strip():
        return None
    pattern = r"\s*,\s*([A-Z][\w\-]*)\s*,\s*" + r"\W+".join(map(re.escape, tail.split()))
    return re.compile(pattern + r"(?!\w)").match(text, end)


def _ends_head(name: str, head: str) -> bool:
    """True when ``name`` (after the brand) is ``head`` or its last two or more words ("<brand>
    Match Clock, Simple Delay" of our "Bronstein Match Clock, Two Buttons"; round 36)."""
    said, ours = keys_of(name), keys_of(head)
    return said == ours or (len(said) >= 2 and ours[-len(said) :] == said)


_NUMBER_AFTER_COMMA = re.compile(r"\s*,\s*(\d+)\b(?![.,]\d)")
_PART_AFTER_COMMA = re.compile(r"\s*,\s*((?:[A-Z0-9][\w\-]*)(?:\s+(?:of\s+)?[A-Z0-9][\w\-]*)*)")


def _other_value(text: str, end: int, tail: str) -> bool:
    """True when ``text`` goes on at ``end`` with a comma and a last part of as many words as
    our title's ``tail``, the same first word and another value ("Size L", "Size M")."""
    after = _PART_AFTER_COMMA.match(text, end)
    if after is None:
        return False
    said, ours = (
        [NUMBER_WORDS.get(word, word) for word in part.casefold().split()]
        for part in (after.group(1), tail)
    )  # ("Size Two" is "Size 2")
    return len(said) == len(ours) > 1 and said[0] == ours[0] and said != ours


def title_cased_words(text: str) -> bool:
    """True when every word of ``text`` of three letters or more starts with a capital."""
    return all(word[:1].isupper() for word in re.findall(r"[^\W\d_]{3,}", text))


# a parenthesis that says another firm is not ours: "Corvallin (a different firm from
# <brand>)", "(no relation to <brand>)", "(not <brand>)" (round 39): our brand is named only
# to be told apart from a soundalike
_DENIAL = re.compile(
    r"\(\s*(?:not|no\s+relation|unrelated|a\s+different|nothing\s+to\s+do|not\s+to\s+be)"
    r"[^()]{0,60}\)",
    re.IGNORECASE,
)


def without_denials(text: str) -> str:
    """``text`` without its parentheses that tell a soundalike apart from another name."""
    return _DENIAL.sub(" ", text)
