"""How the shop's catalogue matcher reads names in an answer (``visibility_match``): a
product's exact full title, said as ours or as another brand's product, and the parts of a
unit that speak of another brand's products (moved out of ``visibility_match`` in round 13
of issue 30, unchanged)."""

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from .listing_keywords import kind_of
from .listing_phrases import MATERIAL_STEMS
from .listing_title import STOPWORDS, stem, word_set
from .visibility_clauses import exact_runs, items_of_other_brands, quantified
from .visibility_evidence import count_beside
from .visibility_lines import VERBS
from .visibility_others import names_in, without_other_names
from .visibility_senses import PACKAGING
from .visibility_sizes import (
    COUNT,
    NUMBER_WORD,
    NUMBER_WORDS,
    PART_SPLIT,
    SIZE,
    compares,
    elliptical_sizes,
    sizes_of,
    spelled_out,
)
from .visibility_words import (
    CLAUSE_SPLIT,
    COLOUR_STEMS,
    IS_OTHERS,
    NOT_THIS,
    OPENERS,
    OTHER_POSSESSIVE,
    keys_of,
    words_of,
)

# ("at", "on": "a Lighthouse at Dusk Jigsaw"; round 24)
_TITLE_RUN = re.compile(
    r"(?<=[a-z,] )[A-Z][\w\-/]*(?:\s+(?:[A-Z0-9][\w\-/]*|with|of|for|in|at|on|&))+"
)
_POSSESSIVE = re.compile(r"['\u2019]s\b", re.IGNORECASE)
_MARK = re.compile("[,;]")
_CLAUSES_AND_MARKS = re.compile(f"({CLAUSE_SPLIT.pattern})", CLAUSE_SPLIT.flags)
# a number and a word in capitals after it: a measure our units do not know ("16 SWG",
# "12 TPI"; round 41)
_NUMBER_BEFORE_WORD = re.compile(r"(?<![\w.])\d[\d.]*\s+([A-Z]{2,4})\b")
# prepositions that end the noun phrase before them ("the navy <brand> underglaze over the
# body"; round 13), beside the stop words
_PREPOSITIONS = frozenset(
    ["over", "under", "across", "into", "onto", "through", "along", "around", "inside", "behind"]
)
_DETERMINERS = frozenset(["the", "a", "an", "this", "that", "its", "their", "our", "my", "your"])
# an earlier edition's mark after our exact title: "my <brand> <our title> Mk I, which they
# stopped making", "..., 2019 edition", "..., First Printing" (round 51): another product
_EDITION = re.compile(
    r"(?:mk|mark|version|v|gen|generation|series) (?:\d+|[ivx]+)$|"
    r"(?:old|original|early|earlier|previous|first) (?:pattern|model|version|series|generation)$|"
    r"(\d{4}|first|second|1st|2nd) (?:edition|printing|run|batch)$"
)
_GONE = re.compile(
    r"\b(?:stopped\s+(?:making|selling)|no\s+longer\s+(?:made|sold|make|sell)|discontinued|"
    r"retired|out\s+of\s+production)\b",
    re.IGNORECASE,
)
# words before a verb: "to rinse", "then rinse" (round 51)
_BEFORE_VERBS = frozenset(["to", "then"])
_LEAD_PREFIX = 3  # words of a title's lead that name it without the rest (round 14)
# a verb after a lead of three words or more, in the plural too ("<brand>'s youth eye guards
# fit under a cap" of our "Youth Eye Guard Goggles"; round 48)
_SAID_OF_THEM = word_set(
    "is are was were has have comes come fits fit suits suit holds hold lasts last stays stay "
    "grips grip works work feels feel keeps keep sits sit"
)
_MANY = frozenset(["set", "pair", "pairs"])  # a title of several things ("Set of 3")
QUANTIFIER_REACH = 4  # words before the kind or the brand a quantifier reaches
QUANTIFIERS = frozenset(["any", "every", "all", "whichever", "whatever", "each"])


def title_cased(
    text: str, brand: AbstractSet[str], holding: Mapping[str, set[str]]
) -> list[set[str]]:
    """The significant words of each name written in Title Case after a lower-case word
    (three capitalised words or more: "... also sell a Slimline Pick Set in Roll-Up Case";
    round 15), the brand and colours aside, two words our titles run together read as one
    ("Quick-Draws" of "Quickdraw"): another product's name when it has words our title
    lacks."""
    names = []
    for match in _TITLE_RUN.finditer(spelled_out(text)):
        run = match.group()
        if sum(1 for token in run.split() if token[:1].isupper()) < 3:
            continue
        words = {w for w in words_of(run) if w.isalpha()} - brand - COLOUR_STEMS  # sizes apart
        keys = keys_of(run)
        for first, second in zip(keys, keys[1:], strict=False):
            joined = stem(first + second)
            if joined in holding:
                words = (words - {stem(first), stem(second)}) | {joined}
        names.append(words)
    return names


def _title_case(runs):
    """True when every word of ``runs`` (``exact_runs``) but a stop word is capitalised
    ("the Lockable Dartboard Cabinet we bought": a name; not "a lockable dartboard cabinet",
    a kind; round 19)."""
    return all(
        spelling[:1].isupper() or token in STOPWORDS or spelling[:1].isdigit()
        for token, spelling, _, _ in runs
    )


# a line that gives one attribute ("Size: EU 46", "Colour: Citron") or starts with a size
# ("The 140 cm: ...")
_PICKING_LINE = re.compile(r"\s*(?:[A-Z][\w ]{0,20}:\s|the\s+\d)", re.IGNORECASE)
GROUP_MIN = 2  # words two variants share to be read together (visibility_match.MIN_FOUND)
CLIPPED_MIN = 4  # letters of a kind's clipped form ("vario")


class NameReading:
    """The name-reading half of ``visibility_match.CatalogueMatcher`` (a mixin: the
    matcher holds the catalogue's words, exact titles, sizes and brand)."""

    def _kind(self, sku):
        if sku not in self.kinds:
            title = self.products[sku].title
            kind = kind_of(title)
            for size in SIZE.finditer(title):  # "Nest Box 32 mm Hole": a box
                if kind is not None and words_of(title[size.end() :])[:1] == [kind]:
                    kind = kind_of(title[: size.start()]) or kind
            for number in _NUMBER_BEFORE_WORD.finditer(title):  # "Rings 16 SWG": rings
                if kind is not None and words_of(number.group(1)) == [kind]:
                    kind = kind_of(title[: number.start()]) or kind
            for count in NUMBER_WORD.finditer(title):  # "Bar Mould 24 Cavities": a mould
                if (  # (a count of things, not a measure: "Shakuhachi 1.8 Shaku",
                    kind is not None  # "Battery 1300 mAh"; round 50)
                    and count.group(1).isdigit()
                    and words_of(count.group(2)) == [kind]
                    and stem(count.group(2).casefold()) != count.group(2).casefold()
                ):
                    kind = kind_of(title[: count.start()]) or kind
            self.kinds[sku] = kind if kind in self.words[sku] else None
            title_keys = keys_of(self.products[sku].title)
            self.plural_kind[sku] = any(
                (k != stem(k) and stem(k) == kind) or k in _MANY for k in title_keys
            )
            modifier = None
            for before, word in zip(title_keys, title_keys[1:], strict=False):
                if stem(word) == kind and len(before) >= 3 and before.isalpha():
                    modifier = stem(before)
            stems = [stem(key) for key in title_keys]
            before_kind = stems[: stems.index(kind)] if kind in stems else []
            materials = [k for k in before_kind if k in MATERIAL_STEMS and k in self.words[sku]]
            if materials:  # the material nearest the kind: "Silk Beading Cord" (round 52)
                self.material_modifier[sku] = materials[-1]
            if modifier in COLOUR_STEMS or modifier in MATERIAL_STEMS:
                modifier = None
            self.modifier[sku] = modifier if modifier in self.words[sku] else None
            name = self.products[sku].title.partition(",")[0]  # its name before a comma
            self.name_words[sku] = frozenset(words_of(name)) - self.brand_stems
        return self.kinds[sku]

    def _of_any(self, keys, anchors):
        """True when a quantifier ("any", "whichever"...) comes shortly before one of the
        ``anchors`` (word stems) in ``keys``."""
        return any(
            stem(word) in anchors and quantified(keys, index, QUANTIFIER_REACH, QUANTIFIERS)
            for index, word in enumerate(keys)
        )

    def _named_after_brand(self, sku, found, keys):
        """True when the unit has every word of the title and its first right after the
        brand ("The <brand> Nonpareil Comb with ... gives the finest pattern I have managed
        with any comb": no "any comb from <brand>"; round 14)."""
        first, width = next(iter(self.title_keys[sku]), None), len(self.brand)
        return found == self.words[sku] and any(
            keys[i : i + width] == self.brand
            and keys[i + width] == first
            and not quantified(keys, i, QUANTIFIER_REACH, QUANTIFIERS)  # "Whichever <brand> ..."
            for i in range(len(keys) - width)
        )

    def _lead_after_brand(self, sku, kind, keys, picked=False):
        """True when the title's words before its kind (two or more), or the first three
        or more of them (round 14: "<brand> end-fed half-wave, 20 m band" of "End-Fed
        Half-Wave Antenna Kit, 20 m Band"), follow the brand in the unit with no
        significant word after them but a number: "Loomhollow Merino DK in teal" of our
        "Merino DK Yarn 50 g - Teal" (not "Birchwood Acacia Salad Servers" of our "Acacia
        Salad Bowl ... with Servers"); two words of it when a variant of ours is said
        (``picked``: "<brand> tencel warp in fuchsine" of our "Tencel Warp Yarn Cone,
        Fuchsine"; round 50)."""
        title_keys = keys_of(self.products[sku].title)
        kinds = [i for i, key in enumerate(title_keys) if stem(key) == kind]
        before = title_keys[: kinds[0]] if kinds else []
        for length in range(len(before), 1, -1):
            if length < len(before) and length < _LEAD_PREFIX and not picked:
                break
            lead = self.brand + before[:length]
            for start in range(len(keys) - len(lead) + 1):
                said = keys[start : start + len(lead)]
                if said[:-1] != lead[:-1] or stem(said[-1]) != stem(lead[-1]):
                    continue
                after = keys[start + len(lead) : start + len(lead) + 1]
                if not words_of(" ".join(after)) or after[0] in NUMBER_WORDS:
                    return said == lead or length >= _LEAD_PREFIX
                if length >= _LEAD_PREFIX and after[0] in _SAID_OF_THEM:
                    return True  # "<brand>'s youth eye guards fit under a cap" (round 48)
        return False

    def _modifier_ends(self, sku, modifier, keys, text, picked):
        """True when ``modifier`` ends a noun phrase of the unit (``_says_kind``); before
        "in" too when a variant of ours is said (``picked``: "<brand> wool in fuchsine")."""
        for index, word in enumerate(keys):
            if stem(word) == modifier:
                after = keys[index + 1] if index + 1 < len(keys) else None
                plural = word != modifier and word not in self.title_keys[sku]
                if (
                    picked
                    and plural
                    and re.search(rf"\b{re.escape(word)}\s*[,;:]", text or "", re.I)
                ):
                    return True  # "both <brand> weathering pigments, the cobalt ..." (round 55)
                if keys[max(0, index - 2) : index] in (["its", "own"], ["their", "own"]):
                    continue  # what the brand grows or makes: "grows its own wheat" (round 52)
                if after in _DETERMINERS or (index and keys[index - 1] in _BEFORE_VERBS) or plural:
                    continue  # a verb: "<brand>'s snowshoes carry the barcode" (round 15),
                    # "<brand> differentials are easy to rebuild" (round 23); a plural: "fit
                    # most square boxes" of our "Box Insert" (round 24)
                if after is None or not words_of(after) or after in _PREPOSITIONS | VERBS:
                    return True
                if picked and (after == "in" or after in PACKAGING or stem(after) in PACKAGING):
                    return True  # "<brand> silk cards, the Venetian Red and ..." (round 52)
                if re.search(rf"\b{re.escape(word)}\s*[,;:.!?)\]]", text or "", re.IGNORECASE):
                    return True  # "the 90 cm <brand> cockerel; smaller ones ..." (round 40)
        return False

    def _variants_beside(self, text: str, exact: AbstractSet[str]) -> set[str]:
        """The variants of a product whose exact title ``text`` says (``exact``) that it
        names by their last part, as the title writes it: "<brand> Dough Board 60 cm:
        Hooker's Green and Flake White" names both colours (round 50)."""
        found = set()
        for sku in exact:
            base = [self.holding[word] for word in self.words[sku] - self.variants]
            for other in set.intersection(*base) - exact if base else ():
                part = self.products[other].title.rpartition(",")[2].strip()
                if (
                    self.words[other] - self.words[sku]
                    and (self.words[sku] ^ self.words[other]) <= self.variants
                    and part
                    and re.search(r"(?<!\w)" + re.escape(part) + r"(?!\w)", text)
                ):
                    found.add(other)
        return found

    def exact_titles(self, text: str) -> set[str]:
        """The SKUs whose whole title ``text`` says (module docstring)."""
        runs = exact_runs(text)
        tokens = tuple(run[0] for run in runs)
        spans = []
        for length in self.exact_lengths:
            for start in range(len(tokens) - length + 1):
                for sku in self.exact.get(tokens[start : start + length], ()):
                    spans.append((start, start + length, sku))
        for title, skus in self.cased.items():
            for start in range(len(tokens) - len(title) + 1):
                end = start + len(title)
                if tokens[start:end] == title and _title_case(runs[start:end]):
                    spans.extend((start, end, sku) for sku in skus)
        return {
            sku
            for start, end, sku in spans
            if not any(s <= start and end <= e and (s, e) != (start, end) for s, e, _ in spans)
            and not self._of_another_brand(runs, start, end)
            and not (COUNT not in self.sizes[sku] and count_beside(tokens, start, end))
            and not self._earlier_edition(text, tokens, end)
        }

    @staticmethod
    def _earlier_edition(text, tokens, end):
        """True when an earlier edition's mark follows our exact title (``_EDITION``): a
        mark ("Mk I", "Old Pattern"), or a dated one ("2019 edition", "First Printing") in a
        unit that says it is no longer made (a citation's "2027 edition" is ours)."""
        mark = _EDITION.match(" ".join(tokens[end : end + 2]))
        return mark is not None and (mark.group(1) is None or _GONE.search(text) is not None)

    def _other_name(self, run):
        """True when ``run`` (of ``exact_runs``) reads as a name that is not our brand's: a
        capitalised word or a possessive, not a stop word nor a word that opens sentences
        ("My", "Try", "Both": ``OPENERS``)."""
        token, spelling, possessive, _ = run
        if token in self.brand_stems or token in STOPWORDS or token in OPENERS:
            return False
        if possessive:
            return spelling[:1].isalnum()
        return len(spelling) >= 2 and spelling[:1].isupper() and not spelling.isdigit()

    def _of_another_brand(self, runs, start, end):
        """True when the title at ``runs[start:end]`` is said as another brand's product:
        right after a name that is not ours ("the Anker MagGo 10,000 mAh Magnetic Power
        Bank", "OXO's Kitchen Shears"), or followed by "from"/"by" and such a name."""
        if start and not runs[start][3] and self._other_name(runs[start - 1]):
            return True
        return (
            end + 1 < len(runs)
            and runs[end][0] in ("from", "by")
            and not runs[end + 1][3]
            and runs[end + 1][1][:1].isupper()
            and runs[end + 1][0] not in self.brand_stems
        )

    def _both_named(self, names: list[set[str]], title: frozenset[str]) -> bool:
        """True when every name with words beyond ``title`` has only variant words beyond
        it, and one of them has the title's own variant word: "<brand> Wool Tops in
        Amaranth and Glaucous" names both variants (round 35)."""
        extra = [name for name in names if name & title and name - title]
        return any(name & title & self.variants for name in extra) and all(
            name - title <= self.variants for name in extra
        )

    def _others_of_brand(self, text):
        """The significant words of each name that follows the brand in capitals."""
        if self.brand_name is None:
            return []
        return names_in(spelled_out(text), self.brand_name, self.compounds, self.brand_stems)

    def _is_other_name(self, word):
        """True when the capitalised ``word`` reads as another brand: not ours, not a
        word of our titles, not a stop word nor one that opens sentences."""
        key = stem(_POSSESSIVE.sub("", word).casefold())
        return (
            key.isalpha()
            and key not in self.brand_stems
            and key not in STOPWORDS
            and key not in OPENERS
            and key not in self.holding
        )

    def _without_other_brands(self, text):
        """``text`` without its clauses that name another brand's product and not our
        brand ("Barkwell leashes are fine, and Ruffwear's Knot-a-Leash is reflective"),
        the items of a list and phrases that start with another brand (``visibility_others``),
        and a clause set against what it follows (", not the L one": ``NOT_THIS``)."""
        text = NOT_THIS.sub(" ", without_other_names(text, self._is_other_name, self.brand_stems))
        for item in items_of_other_brands(text, self._is_other_name):
            if not self.names_brand(item):
                text = text.replace(item, " ", 1)
        # (a comma or semicolon between the clauses is kept: "..., 30 cm; smaller presses
        # ..." is no "30 cm smaller"; a dash is not: "Dripper Size 02 - Black"; round 40)
        parts = _CLAUSES_AND_MARKS.split(text)
        if len(parts) < 3:
            return text
        out = []
        for index, part in enumerate(parts):
            if index % 2:  # the mark between two clauses
                out.append(part if _MARK.search(part) else " ")
            elif self.names_brand(part) or not (
                any(
                    stem(match.group(1).casefold()) not in self.brand_stems
                    for match in OTHER_POSSESSIVE.finditer(part)
                )
                or any(self._is_other_name(m.group(1)) for m in IS_OTHERS.finditer(part))
            ):
                out.append(part)
            else:
                out.append(" ")
        return "".join(out)

    def _clipped(self, key, kind):
        """True when ``key`` is ``kind`` clipped ("vario" of "variometer"; round 30): its
        first four letters or more, a word no title of the shop has."""
        return (
            CLIPPED_MIN <= len(key) <= len(kind) - 3
            and kind.startswith(key)
            and (key not in self.holding)
        )

    def _sizes_said(self, said, text):
        """The sizes ``text`` (the unit ``said`` without other brands' parts) says; of
        several amounts in one unit, those of the one clause naming our brand ("the 67 mm
        <brand> filter is the one; the 77 mm would need a step-up ring")."""
        sizes = sizes_of(text)
        several = {unit for unit, amounts in sizes.items() if len(amounts) > 1}
        if self.brand and several:
            for split in (CLAUSE_SPLIT.split, PART_SPLIT.split):  # "Once 25 lb ..., the 50 lb"
                clauses = split(said)
                ours = [clause for clause in clauses if self.names_brand(clause)]
                own = sizes_of(ours[0]) if len(ours) == 1 else {}
                # (the brand's clause says one of them: "two <brand> transmitters, a 433
                # MHz and an 868 MHz" says both; round 30)
                if several & own.keys() and all(len(amounts) == 1 for amounts in own.values()):
                    for clause in clauses:  # "..., the 30 L a weekend" (round 13)
                        for unit, amounts in elliptical_sizes(clause).items():
                            if unit in own and clause not in ours:
                                own[unit] = own[unit] | amounts
                    return own
        return sizes

    def _follow_ups(self, units, found):
        """A unit that names nothing after one that speaks of two variants of ours and names
        neither picks one when read with it ("<brand> sell the gouge in two widths. Take the
        bigger of the two"; "Shoes: <brand> Push Shoes" then "Size: EU 46"; round 33)."""
        for index in range(1, len(units)):
            back = index - 1  # (past a question: "Which length? The 140 cm.")
            if back and units[back].text.rstrip().endswith("?") and not found[back]:
                back -= 1
            before, unit = units[back], units[index]
            if found[index] or found[back] or not self.names_brand(before.text):
                continue
            if not (_PICKING_LINE.match(unit.text) or compares(unit.text)):
                continue  # a label's line ("Size: EU 46"), "The 140 cm ...", "the bigger of"
            view = self._view(before.text)
            group = [sku for sku, words in view.candidates.items() if len(words) >= GROUP_MIN]
            if len(group) < 2 or len({view.candidates[sku] for sku in group}) != 1:
                continue  # not two variants said by the same words
            # (joined by a colon: a name in capitals does not run on into the next line)
            named = self.identify(f"{before.text.rstrip('.:;')}: {unit.text}", True)
            if named and set(named) < set(group):
                found[index] = named
