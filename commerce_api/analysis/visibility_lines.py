"""The brand's lines and its types (round 24 of issue 30).

- **A line of the brand** is no word of one product: a word of our title said in the plural
  right after the brand or after a verb of making ("<brand> puzzles use thick grey board",
  "they only make gliders and parts") speaks of everything the brand makes of that word,
  when our title has it in the singular and it is not the product's kind (the kind said so
  is ``visibility_evidence.brand_kinds``'s). It lends the unit no word of our title: "<brand>
  puzzles ... board" is not our "Puzzle Board".
- **A type's name in lower case** right after the brand ("the 210 mm <brand> yanagiba", "<brand>'s
  yanagiba comes in ...") says what the product is, as in capitals
  (``visibility_others.type_named``), when nothing after it goes on naming a thing: the
  next word is none, a number, a stop word or a verb (not "<brand> insulated bottles" of
  our "Insulated Tumbler").
- **The brand's catalogue** said as a list ("<brand> sells impact vests, hook knives, pumps,
  fins and flying lines") names no product: three or more things after the brand and a
  verb of selling, none with an article or a number (round 25; not "<brand> sells the
  20 cm dome, ...").
- **A variant's own word** said with the brand's plural kind picks that variant out, as a
  size does: "<brand> magician's cards with the cyan back" of our "Magician's Cards, Cyan
  Back" beside the chartreuse one (round 28).
- **Anyone's product**: "..., whoever makes the ball" speaks of a kind of product by any maker
  (round 28).
"""

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import groupby

from .listing_phrases import MATERIAL_STEMS
from .listing_title import STOPWORDS, stem, word_set
from .visibility_others import without_denials
from .visibility_words import COLOUR_STEMS, keys_of

_MAKING = word_set("make makes made sell sells sold offer offers stock stocks produce produces")
# words after a type's name that say something of it rather than name more of it
VERBS = word_set(
    "is are was were has have had comes come came gets get makes made cuts does did will "
    "would can could costs sells feels looks works holds takes needs suits fits"
)
# endings of adjectives and participles: "insulated", "folding", "washable"... name no type
_NOT_A_TYPE = ("ed", "ing", "able", "ible", "less", "ful", "ous", "ive")


def line_words(
    keys: Sequence[str],
    brand: Sequence[str],
    found: AbstractSet[str],
    title_keys: Sequence[str],
    kind: str | None,
) -> set[str]:
    """The words of ``found`` (stems) that the unit (``keys``) says only as the brand's line
    (module docstring)."""
    width, singular = len(brand), {key for key in title_keys if key == stem(key)}
    lines = set()
    for word in found - {kind} & singular:
        said = [i for i, key in enumerate(keys) if stem(key) == word]
        if said and all(_a_line(keys, i, brand, width) for i in said):
            lines.add(word)
    return lines


def _a_line(keys, index, brand, width):
    key = keys[index]
    if key == stem(key):
        return False  # in the singular
    after_brand = width and index >= width and list(keys[index - width : index]) == list(brand)
    return bool(after_brand) or (index > 0 and keys[index - 1] in _MAKING)


def lower_type_named(
    keys: Sequence[str], brand: Sequence[str], found: AbstractSet[str], kinds: set
) -> bool:
    """True when the one word of ``found`` follows the brand in lower case as a type's name
    (module docstring); ``kinds``: the kinds of the products holding it (all one)."""
    if len(found) != 1 or len(kinds) != 1 or None in kinds or found & kinds:
        return False
    if found & (MATERIAL_STEMS | COLOUR_STEMS):
        return False  # "the 45 cm <brand> foam"
    (word,) = found
    width = len(brand)
    for i in range(len(keys) - width):
        if list(keys[i : i + width]) != list(brand) or keys[i + width] != word:
            continue
        if word != stem(word) or word.endswith(_NOT_A_TYPE):
            return False
        after = keys[i + width + 1] if i + width + 1 < len(keys) else None
        return after is None or after.isdigit() or after in STOPWORDS or after in VERBS
    return False


_SELLING = re.compile(r"\b(?:sells?|makes?|stocks?|offers?|carr(?:y|ies))\s+(.*)", re.I | re.S)
_ITEMS = re.compile(r",|;|\band\b|\bplus\b|\bas well as\b", re.IGNORECASE)
_SPECIFIC = re.compile(r"^\s*(?:the|a|an|this|that|their|its|our|one)\b|\d", re.IGNORECASE)


def catalogue_list(keys: Sequence[str], brand: Sequence[str], text: str) -> bool:
    """True when the unit lists the brand's catalogue (module docstring)."""
    width = len(brand)
    if not width or not any(
        list(keys[i : i + width]) == list(brand) and keys[i + width] in _MAKING
        for i in range(len(keys) - width)
    ):
        return False
    selling = _SELLING.search(text)
    if selling is None:
        return False
    items = [item for item in _ITEMS.split(selling.group(1)) if item.strip(" .!?")]
    return len(items) >= 3 and not any(_SPECIFIC.search(item) for item in items)


_ANY_MAKER = re.compile(r"\b(?:who|which)ever\s+(?:makes?|made|sells?|sold|brand)\b", re.I)


def any_maker(text: str) -> bool:
    """True when the unit says its product may be anyone's (module docstring)."""
    return _ANY_MAKER.search(text) is not None


def variant_word(
    found: AbstractSet[str], sku: str, holding: Mapping[str, set[str]], words: Mapping
) -> bool:
    """True when ``found`` has the one word that sets ``sku`` apart from another product
    whose title has every other word of ours and one more (module docstring)."""
    own = words[sku]
    for word in found:
        if holding.get(word) != {sku}:
            continue
        rest = own - {word}
        others = set.intersection(*(holding[w] for w in rest)) - {sku} if rest else set()
        if any(len(words[other] - rest) == 1 for other in others):
            return True
    return False


_VARIANT_PART_WORDS = 3  # ("Lead Tin Yellow": round 54)


def variant_words(words: Mapping[str, frozenset[str]], titles: Mapping[str, str]) -> set[str]:
    """The words that set a product apart from another whose title has every other word
    of its title and one other word instead, each the whole last part of its title after a
    comma ("flax" of "Streamer, Flax" beside "Streamer, Heliotrope": an attribute's value);
    ``words``: each SKU's title words, ``titles``: its title. Linear in the catalogue: the
    titles are grouped by their words less their last part's."""
    groups: dict[frozenset[str], set[frozenset[str]]] = {}
    for sku, own in words.items():
        # (a last part of two words too: "Woad" beside "Cerulean Frost"; round 40)
        last = frozenset(stem(key) for key in keys_of(titles[sku].rpartition(",")[2]))
        if 0 < len(last) <= _VARIANT_PART_WORDS and last <= own:
            groups.setdefault(own - last, set()).add(last)
    return {
        word
        for group in groups.values()
        if len(group) > 1
        for part in group
        # (a part of two words shares none with the others: not "Jumbo Index" beside
        # "Standard Index")
        if len(part) == 1 or not any(part & other for other in group if other != part)
        for word in part
    }


# a record of fields, one "key: value" a line, with keys in lower case (YAML, a spec block;
# round 36): "maker: <brand>" / "product: Speed Cube" / "size: 3x3" names one product
# ... or keys of a product's record in capitals ("- Brand: <brand>" / "- Model: cutting mat" /
# "- Colour to choose: **Titan Buff**"; round 49)
_FIELD = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:[a-z][a-z0-9_ ]{0,24}|(?:Brand|Maker|Make|Model|Product|Name|"
    r"Colou?r|Finish|Size|Variant|Edition|Type|Item)(?:[ \t]+[a-z]+){0,3}):[ \t]+(\S[^\n]*?)[ \t]*$"
)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)[\w-]*[ \t]*$")


def records_joined(text: str) -> str:
    """``text`` with each run of two or more field lines (``_FIELD``, fences around them
    dropped) said as one sentence of their values: "<brand> Speed Cube 3x3."."""
    lines = [line for line in text.split("\n") if not _FENCE.match(line)]
    out: list[str] = []
    for fields, run in groupby(lines, key=lambda line: _FIELD.match(line) is not None):
        run = list(run)
        if fields and len(run) >= 2:
            out.append(" ".join(_FIELD.match(line).group(1).strip("\"'") for line in run) + ".")
        else:
            out.extend(run)
    return "\n".join(out)


# a hashtag in CamelCase: its words ("#BellSensorKitForRingingSimulators"; round 34)
_HASHTAG = re.compile(r"#((?:[A-Z][a-z]+|[0-9]+[A-Za-z]*){2,})\b")


def hashtag_words(text: str) -> str:
    """``text`` with each hashtag in CamelCase said as its words."""
    return _HASHTAG.sub(
        lambda match: " ".join(re.findall(r"[A-Z][a-z]+|[0-9]+[A-Za-z]*", match.group(1))), text
    )


_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")


def without_emails(text: str) -> str:
    """``text`` without its e-mail addresses: a way to reach the brand, no product of it
    ("write to shop@<brand>.example"; round 37)."""
    return _EMAIL.sub(" ", text)


def plain_answer(answer: str) -> str:
    """``answer`` as it is read: no parenthesis that tells a soundalike apart, no e-mail
    address, hashtags as words, records of fields as sentences (rounds 34 to 39)."""
    return records_joined(hashtag_words(without_emails(without_denials(answer))))
