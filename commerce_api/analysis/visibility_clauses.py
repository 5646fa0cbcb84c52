"""Parts of a unit that lend no words to our products (``visibility_match``, round 5 of
issue 30): the items of a list in one sentence that are another brand's ("a Pikebrook reel,
Troutley wire traces and a Riverhook landing net"), a quantifier's reach ("any nest box
from <brand>", not "every garden needs: the <brand> bird bath") and the colours a product
is offered in ("available in sand and plum", not "knitted in teal and ochre"); and the
units of an answer and the runs an exact title is compared by, moved here from
``visibility_match`` (which re-exports ``answer_units``)."""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .listing_title import fold_spelling, stem
from .visibility_words import plain

_EXACT_TOKEN = re.compile(r"[^\W\d_]+|\d+")  # letter runs and digit runs ("350ml": 2)
_DETACHING = re.compile(r"[^\s\-'\u2019]")  # punctuation between two words
_NUMBERED = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*)?\s*(\d{1,3})[.)]\s+(.*\S)")
_BULLET = re.compile(r"^(\s*)[-*\u2022+]\s+(.*\S)")
_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]*)\)")  # a markdown link: text, address
_URL = re.compile(r"\b(?:https?://|www\.)[^\s)\]>]+", re.IGNORECASE)
_SCHEME = re.compile(r"^(?:https?://)?(?:www\.)?", re.IGNORECASE)
# the path segments of a page of several products (a collection, a category, a search)
_LISTING_PAGES = frozenset(
    ["collections", "collection", "c", "category", "categories", "catalog", "catalogue"]
    + ["range", "ranges", "departments", "browse", "search", "tag", "tags", "brands"]
)
# the query keys whose values name a product
_PRODUCT_PARAMETER = re.compile(
    r"(?:^|[&;])(sku|product|item|add|code|variant|id)=([^&;#\s]+)", re.IGNORECASE
)
_DEGREES = frozenset(["degree", "degrees", "deg"])
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")  # "| cell | cell |"
_TABLE_RULE = re.compile(r"^[\s|:\-]+$")  # "|---|:---:|"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# a full stop that ends an abbreviation, not a sentence ("Plane No. 4", "e.g. a rasp")
_ABBREVIATION = re.compile(r"(?:^|\s|\()(?:no|nr|vol|mk|approx|ca|vs|e\.g|i\.e|incl)\.$", re.I)

# the items of a list in a sentence: cut at commas and "and"/"or"/"plus" (";" cuts clauses)
_ITEM_SPLIT = re.compile(r"(\s*,\s*|\s+(?=(?:and|or|plus)\s))", re.IGNORECASE)
# an item's first words before its name: a joining word and a determiner
_ITEM_LEAD = frozenset(
    [
        "and",
        "or",
        "plus",
        "with",
        "a",
        "an",
        "the",
        "some",
        "two",
        "three",
        "four",
        "my",
        "your",
        "their",
    ]
)
_WORD = re.compile(r"[^\W_]+(?:['\u2019]s)?")
# a quantifier's noun phrase ends at a determiner ("every beginner needs the ..."), unless
# after "of" ("any of the <brand> capos")
_DETERMINERS = frozenset(
    ["the", "a", "an", "this", "that", "these", "those", "my", "your", "our", "their"]
)
# words that say a product is offered in colours: "available in", "comes in", "sold in"
_OFFERED = re.compile(
    r"\b(?:available|comes?|came|offered|sold|made|choice|options?|colou?rs?|shades?)"
    r"(?:\s+\w+){0,2}\s*$",
    re.IGNORECASE,
)


def items_of_other_brands(text: str, is_other_name: Callable[[str], bool]) -> list[str]:
    """The list items of ``text`` whose first word after a joining word and a determiner
    is a name ``is_other_name`` says is not ours, followed by words in lower case ("a
    Riverhook landing net"; not "<brand> and Lamy both make ...": names joined by "and",
    nor "Fountain Pen, Medium Nib": a name going on)."""
    parts = _ITEM_SPLIT.split(text)
    if len(parts) < 3:
        return []
    others = []
    for index in range(2, len(parts), 2):
        item, before = parts[index], _WORD.findall(parts[index - 2])
        words = _WORD.findall(item)
        while words and words[0].casefold() in _ITEM_LEAD:
            words = words[1:]
        if len(words) < 2 or not words[0][:1].isupper() or not words[1][:1].islower():
            continue
        if "," not in parts[index - 1] and before and before[-1][:1].isupper():
            continue  # "Orla Beck and Lamy both make ...": one subject
        if is_other_name(words[0]):
            others.append(item)
    return others


def quantified(keys: Sequence[str], index: int, reach: int, quantifiers: frozenset) -> bool:
    """True when a quantifier stands at most ``reach`` words before ``keys[index]`` with no
    determiner between them that starts another noun phrase."""
    for back in range(index - 1, max(-1, index - reach - 1), -1):
        word = keys[back]
        if word in quantifiers:
            return True
        if word in _DETERMINERS and not (back and keys[back - 1] == "of"):
            return False
    return False


def offered_in(text: str, options: re.Pattern) -> bool:
    """True when ``text`` says the colours (``options``, "in sand and plum") a product is
    offered in ("available in ...", "comes in ..."), not colours of things it names."""
    return any(_OFFERED.search(text[: match.start()]) for match in options.finditer(text))


@dataclass
class Unit:
    text: str
    rank: int | None  # the list item's rank; None for prose
    paragraph: int  # prose sentences of one paragraph (and one list) share it
    heading: bool = False  # prose that introduces the list right after it


def answer_units(answer: str | None) -> list[Unit]:
    """The units of ``answer`` in order (see the module docstring); a link is its text and
    its address's host and path in brackets (``address_words``)."""
    lines = _URL.sub(address_words, _LINK.sub(_link_words, answer or "")).splitlines()
    numbered = any(_NUMBERED.match(line) for line in lines)
    bullet_indents = [len(m.group(1)) for m in map(_BULLET.match, lines) if m]
    base_indent = min(bullet_indents) if bullet_indents else 0
    units, current, rank, paragraph, in_table, header = [], None, 0, 0, False, ""
    for line in lines:
        if not line.strip():
            paragraph += 1
            in_table = False
            continue
        if row := _TABLE_ROW.match(line):  # a table: its header heads its rows, list-like
            if not _TABLE_RULE.match(line):
                cells = " | ".join(cell.strip() for cell in row.group(1).split("|"))
                rank += in_table
                if not in_table:
                    header = cells
                    units.append(Unit(cells, None, paragraph, True))
                else:  # a row reads with its header's words after it ("ash, 15 cm | <brand> hoop")
                    units.append(Unit(f"{cells} | {header}", rank, paragraph))
                in_table, current = True, None
            continue
        if in_table:
            paragraph, in_table = paragraph + 1, False
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
        units.extend(Unit(sentence, None, paragraph) for sentence in sentences(line))
    return units


def address_words(match: re.Match) -> str:
    """An address as words: its host and path ("shop.example/p/fg-arrow-28" is "shop example
    p fg-arrow-28", where a product's slug or code may name it); of its query, which
    carries tracking words, only the values of the keys that name a product ("?sku=CM-FLEECE",
    "?add=SC-GUARDS"; round 15); not its fragment; nothing past a segment of a page of
    several ("/collections/", "/c/", "/category/"; round 18)."""
    address, _, query = _SCHEME.sub("", match.group(0)).split("#")[0].partition("?")
    words = [part for part in re.split(r"[/.]+", address) if part]
    listing = _listing(words)
    if listing is not None:  # ".../collections/skate-laces": a page of several (round 18)
        words = words[:listing]
    words += [value for _, value in _PRODUCT_PARAMETER.findall(query)]
    return " ".join(words)


def _listing(words):
    """The index of the segment of ``words`` (an address's) that opens a page of several
    products, when the address ends with that page's name ("collections/skate-laces"; not
    "collections/storage/walnut-piece-box", a product in it), else None."""
    for index, word in enumerate(words):
        if word.casefold() in _LISTING_PAGES:
            return index if len(words) - index <= 2 else None
    return None


def _link_words(match):
    if not _URL.match(match.group(2)):
        return match.group(1)
    address = _URL.sub(address_words, match.group(2))
    path = _SCHEME.sub("", match.group(2)).split("#")[0].partition("?")[0]
    if _listing([part for part in re.split(r"[/.]+", path) if part]) is not None:
        return f"({address})"  # its text names the page of several, not one product
    return f"{match.group(1)} ({address})" if address else match.group(1)


def sentences(line: str) -> list[str]:
    """The sentences of ``line``; a full stop after an abbreviation ends none."""
    out = []
    for piece in _SENTENCE_END.split(line.strip()):
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] += " " + piece
        elif piece:
            out.append(piece)
    return out


def exact_runs(text: str | None) -> list[tuple[str, str, bool, bool]]:
    """``[(token, spelling, possessive, detached)]`` of ``text``: its letter runs (lower
    case, plurals folded: "Chefs" is "Chef's") and digit runs ("10,000" one run), possessives
    cut (and marked on the word they follow); ``detached``: the run starts the text or
    punctuation sets it off from the one before ("Top pick: Cardboard...")."""
    runs, last_end, text = [], 0, plain(text)
    for match in _EXACT_TOKEN.finditer(text):
        spelling, gap = match.group(), text[last_end : match.start()]
        last_end = match.end()
        if runs and spelling.casefold() == "s" and gap in ("'", "\u2019"):
            runs[-1] = (*runs[-1][:2], True, runs[-1][3])
            continue
        if (
            runs
            and gap in (",", ".", " ", "\u00a0", "\u202f")
            and len(spelling) == 3
            and spelling.isdigit()
            and runs[-1][0].isdigit()
            and len(runs[-1][0]) <= 6
        ):
            runs[-1] = (runs[-1][0] + spelling, *runs[-1][1:])  # "10,000" is "10000"
            continue
        token = fold_spelling(spelling.casefold())
        if token in _DEGREES and runs and runs[-1][0].isdigit():
            continue  # "51 Degrees North" is "51° North"
        if not token.isdigit():
            token = stem(token)
        runs.append((token, spelling, False, not runs or bool(_DETACHING.search(gap))))
    return runs


def exact_tokens(text: str | None) -> tuple[str, ...]:
    """``text`` as compared for an exact title: lower-case letter runs (plurals folded) and
    digit runs, possessives cut."""
    return tuple(run[0] for run in exact_runs(text))


_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")


def exact_forms(title: str) -> set[tuple[str, ...]]:
    """The ``exact_tokens`` of ``title`` and of it with its hyphenated words written closed
    ("Quick-Pack Glider Bag" said "Quickpack Glider Bag"; round 27)."""
    return {exact_tokens(title), exact_tokens(_HYPHEN.sub("", title))}
