"""Which of the shop's products an assistant's answer names (``llm_visibility_score``).

An answer is cut into units: the items of a list (with their nested lines) and the
sentences of prose. A unit names one of our products when it carries the product's GTIN or
SKU, or, said of our brand, the words of its title that single it out in the catalogue:

- the *words* of a title are its significant words (three letters or more, or a code of
  letters and digits such as "A5"; not stop or promotional words), plurals folded,
  hyphenated words split ("Dot-grid" is "dot grid");
- a unit speaks of our brand when it names the brand, when it is a prose sentence after
  one that did in the same paragraph ("Fieldhouse sells a blanket. Their wool blanket..."),
  or when it is an item of a list whose heading names the brand ("Fieldhouse picks:");
- in such a unit the product's words found, F, must be at least two (or the whole title)
  and no other product of the catalogue may have all of F: "Fieldhouse enamel mug" names
  no SKU when the shop sells a white and a blue one; "Fieldhouse white enamel mug" names
  the white one.

An exact full title names its product in any unit, brand or not ("Oiled Oak Chopping
Board 30 x 20 cm"): the title's words and numbers in order, case, punctuation and
possessives aside, plurals folded ("Chefs Knife"), thousands run together ("10,000" is
"10000"), when the title is a product's name rather than a kind's (at least
``EXACT_MIN_TOKENS`` words and numbers, ``EXACT_MIN_WORDS`` of them significant, or
``EXACT_ALL_SIGNIFICANT`` words all significant); a title found inside a longer one found in
the same place is not named, nor one said as another brand's product (right after a
capitalised name or a possessive that is not our brand: "the Anker MagGo <our title>",
"OXO's <our title>"; or followed by "from"/"by" and such a name). Said of our brand, the
title's words must also name what the product is (its kind, the head noun of its title, or
the last part of a compound kind: "pack" of "Backpack"; "Insulated Coffee Flask" is no
tumbler), must not be another product of the brand (a name that follows the brand in
capitals with a word our title lacks: "Tidewater Canvas Tote Bag" is not our canvas duffel
bag), must not speak of any product of a kind ("any enamel cup from Falcon", "whichever
Birchwood board"), must not name only colours our title lacks, and must not say another
size, or another number after a word of the title ("SPF 30" of our "SPF 50"). A clause that
names another brand's product by a possessive ("..., and Ruffwear's Knot-a-Leash is ...")
and not our brand lends no words to ours, nor does an item of a list in one sentence that
starts with another brand ("..., Troutley wire traces and a Riverhook landing net"); of
several sizes, the clause naming our brand says which; a product of a kind said once with
fewer of its words in the unit than another of that kind is not the one meant
(``visibility_clauses``; round 5 of issue 30, docs/decisions.md). Round 7: size letters and
compounds are words however written (``visibility_words``); a count we do not sell,
"without" our words, a carried sentence without a definite reference, and the brand taken by
an exact title name nothing (``visibility_evidence``).

The brand alone, or the brand with a kind of product ("Fieldhouse mugs"), names no SKU:
it is a brand mention. A generic title said of another brand ("Falcon enamel mug, white")
is not ours. When the shop has no brand words at all, a unit names a product by its title
alone: F of at least ``TITLE_MIN_WORDS`` words, ``TITLE_COVERAGE`` of its title, and again
shared by no other product.
"""

import re
from dataclasses import dataclass

from .listing_phrases import MATERIAL_STEMS
from .listing_title import stem, word_set
from .visibility_claims import unclaimed, unclaimed_words, variant_of_led
from .visibility_clauses import (
    Unit,
    answer_units,
    exact_forms,
    exact_tokens,
    offered_in,
)
from .visibility_evidence import (
    UnitView,
    brand_aside,
    brand_kinds,
    brand_leads,
    brand_taken,
    count_conflict,
    definite_before,
    earlier_model,
    kind_and_size,
    most_words_per_kind,
    name_after_brand,
    one_of_several,
    past_product,
    place_after,
    swapped_word,
    without_our_words,
)
from .visibility_lines import (
    any_maker,
    catalogue_list,
    line_words,
    lower_type_named,
    plain_answer,
    variant_word,
    variant_words,
)
from .visibility_names import NameReading, title_cased
from .visibility_others import renamed, swapped_last_part, type_named, without_people
from .visibility_senses import (
    colours_of_other_things,
    counts_of_other_things,
    readers_own,
    served_words,
    without_other_amounts,
)
from .visibility_sizes import (
    NUMBER_WORDS,
    bare_numbers,
    compared_pick,
    compares,
    numbers_single_out,
    only_options,
    sizes_agree,
    sizes_conflict,
    sizes_of,
    spaced_number_words,
)
from .visibility_spelling import Misspellings
from .visibility_words import (
    ANY_OPTIONS,
    COLOUR_OPTIONS,
    COLOUR_STEMS,
    VARIANT_STEMS,
    CompoundWords,
    keys_of,
    says_kind,
    size_words,
    without_makers,
    words_of,
)

NUMBER_STEMS = frozenset(NUMBER_WORDS)  # "two", "six": counts, which sizes compare
TITLE_COVERAGE = 0.75  # without a brand: share of the title's words a unit must carry
TITLE_MIN_WORDS = 3  # ... and at least this many of them
MIN_FOUND = 2  # with the brand: words of the title found (or the whole title)
RARE_HOLDERS = 256  # a word this few titles have: its products are looked at one by one
MAX_COMMON_WORDS = 8  # common words of one unit combined (the rarest ones)
EXACT_MIN_TOKENS = 5  # an exact title names its product alone from this many words/numbers
EXACT_MIN_WORDS = 3  # ... of which this many significant
EXACT_ALL_SIGNIFICANT = 4  # ... or this many words and numbers, all significant
EXACT_CASED_TOKENS = 3  # ... or this many, all significant, written in Title Case
EXACT_SIZED_WORDS = 2  # ... or this many significant words and a size ("Steel Rule 150 mm")
_NAME_AFTER = r"(?:['\u2019]s)?((?:\s+(?:[a-z]*[A-Z0-9][\w.\-]*|&|with|of|and|for|in|at|on))+)"
# words after the brand that make it a style, another maker's product ("a <brand>-style
# shuttle", "<brand>-inspired beaters"; round 13)
_STYLE = frozenset(["style", "styled", "inspired", "type", "esque", "influenced"])
_PEOPLE = word_set(  # people named after a thing: "sells to straw workers" (round 52)
    "workers makers users artists weavers carvers players collectors lovers fans"
)
_MARKS = re.compile("[\u2122\u00ae\u00a9\u2120]")  # trade and service marks
_NUMBER = re.compile(r"(?<![\w.])\d[\d.,]*(?![\w.])")  # a number, not a code ("A5")
_GENERAL = re.compile(r"\b(?:whatever|whichever|regardless\s+of|no\s+matter)\b", re.I)
_DIGIT_RUN = re.compile(r"\d[\d \-]{6,}\d")
_POSSESSIVE = re.compile(r"['\u2019]s\b", re.IGNORECASE)
_SKU_TOKEN = re.compile(r"[A-Za-z0-9._-]+")  # the characters a SKU may have
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Product:
    sku: str
    title: str
    gtin: str | None = None


class CatalogueMatcher(NameReading):
    """Finds the products of a catalogue (and the brand) in answers."""

    def __init__(self, products, brand=None):
        self.brand = keys_of(brand)
        self.brand_tokens = exact_tokens(brand)
        # (as spelt too: "Palliser's" is our "Palliser", read "pallizer"; round 48)
        spelt = [word.casefold() for word in _WORD.findall(brand or "")]
        brand_words = self.brand_stems = frozenset(map(stem, [*self.brand, *spelt]))
        self.brand_name = (
            re.compile(
                r"(?<![\w])(?i:"
                + r"\W+".join(re.escape(w) for w in (brand or "").split() if keys_of(w))
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
        self.cased = {}  # the exact tokens of shorter titles that name it in Title Case
        self.holding = {}  # word -> SKUs whose title has it
        self.gtins = {}
        self.skus = {}  # the SKU case-folded -> the SKU
        self.sizes = {}  # sku -> its title's sizes
        self.spaced = {}  # sku -> its title's "#word" numbers written apart ("Size 02")
        self.plural_kind = {}  # sku -> True when its title says its kind in the plural
        self.modifier = {}  # sku -> the word before its kind ("throw" of "throw blanket")
        self.material_modifier = {}  # ... when a material ("wool" of "Rug Wool Skein")
        self.name_words = {}  # sku -> its title's words before a comma (with ``_kind``)
        self.compounds = CompoundWords()
        self.title_keys = {}  # sku -> its title's words in order (keys_of)
        for product in products:
            sku = product.sku
            self.products[sku] = product
            self.sizes[sku] = sizes_of(product.title)
            self.spaced[sku] = spaced_number_words(product.title)
            # (promotional words are no title words; phrases such as "best seller" are
            # left in: cutting them out costs more than they can confuse)
            self.words[sku] = frozenset(words_of(product.title)) - brand_words
            title_keys = len(keys_of(product.title))
            title_words = sum(1 for word in self.words[sku] if len(word) >= 3)
            # a size, or a count ("Station Logbook, 500 Contacts": round 14)
            measured = _NUMBER.search(product.title) is not None
            named = (
                (title_keys >= EXACT_MIN_TOKENS and title_words >= EXACT_MIN_WORDS)
                or (title_keys >= EXACT_ALL_SIGNIFICANT and title_words >= EXACT_ALL_SIGNIFICANT)
                or (measured and title_words >= EXACT_SIZED_WORDS)
            )
            if named:
                # and its hyphenated words written closed ("Quickpack"; round 27)
                for tokens in exact_forms(product.title):
                    self.exact.setdefault(tokens, []).append(sku)
                    self.exact_lengths.add(len(tokens))
            elif title_keys >= EXACT_CASED_TOKENS and title_words >= EXACT_MIN_WORDS:
                # a shorter title names it written in capitals (round 19)
                for tokens in exact_forms(product.title):
                    self.cased.setdefault(tokens, []).append(sku)
            for word in self.words[sku]:
                self.holding.setdefault(word, set()).add(sku)
            self.compounds.add_title(product.title, self.words[sku])
            self.title_keys[sku] = keys_of(product.title)
            gtin = (product.gtin or "").strip().lstrip("0")
            if gtin:
                self.gtins.setdefault(gtin, set()).add(sku)
            self.skus[sku.casefold()] = sku
        self.spelling = Misspellings(
            self.holding.keys(), {sku: [stem(k) for k in ks] for sku, ks in self.title_keys.items()}
        )
        # every title word's stem, counted words too ("500 Pieces")
        self.counted = {stem(key) for keys in self.title_keys.values() for key in keys}
        self.variants = variant_words(  # "..., Flax" beside "..., Heliotrope"
            self.words, {sku: p.title for sku, p in self.products.items()}
        )

    def names_brand(self, text: str) -> bool:
        if not self.brand:
            return False  # (a person of the brand's name is not the brand: "Ada <brand>")
        keys, width = keys_of(without_people(text, self.brand_tokens)), len(self.brand)
        return any(
            keys[i : i + width] == self.brand
            and not place_after(keys, i + width, self.holding)
            and not _STYLE.intersection(keys[i + width : i + width + 1])
            for i in range(len(keys) - width + 1)
        )

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

    def _single_out_sized(self, found, sku, sizes, text, numbers):
        """``_single_out``, or the size the unit says is ours and no other's of ``found``;
        a unit naming several sizes one by one ("the 24 cm for eggs and the 28 cm for
        steaks") names each, unless they are the sizes it comes in ("in 24 or 28 cm")."""
        if self._single_out(found, sku):
            return True
        others = set.intersection(*(self.holding[word] for word in found)) - {sku}
        if found == {self._kind(sku)}:  # "the 3 mm <brand> strips": no "Strip Crimper" (round 30)
            others = {other for other in others if self._kind(other) in found}
        # "the 4000 size of the <brand> reel": our "Reel 4000"; "the 8.5 <brand> deck"
        options, others_sizes = only_options(text, offered_in), [self.sizes[o] for o in others]
        if numbers_single_out(numbers, self.sizes[sku], others_sizes, options):
            return True
        if compared_pick(text, self.sizes[sku], others_sizes):  # "the larger of the two"
            return True
        if not sizes or not sizes_agree(sizes, self.sizes[sku]):
            return False
        if all(sizes_conflict(sizes, self.sizes[other]) for other in others):
            return True
        several = any(  # (a size of ours alone: not "62 in" of two 62 in bows; round 24)
            len(amounts) > 1
            and amounts
            & self.sizes[sku].get(unit, set())
            - set().union(*(self.sizes[other].get(unit, set()) for other in others))
            for unit, amounts in sizes.items()
            # a number written apart from its word ("Size 02") is a size; one run into it
            # ("model4340") is a code, a word of its own
            if not unit.startswith("#") or unit in self.spaced[sku]
        )
        return several and not options

    def _type_name(self, found, text, keys, picked):
        """A type's name after the brand says what the product is (``type_named``), in
        lower case too with a size of ours (``lower_type_named``; round 24)."""
        kinds = {self._kind(other) for word in found for other in self.holding[word]}
        return self.brand_name is not None and (
            type_named(text, self.brand_name, found, kinds)
            or (picked and lower_type_named(keys, self.brand, found, kinds))
        )

    def _says_kind(self, sku, kind, found, keys, sizes, text=None):
        """The unit says what the product is: its kind, in the title's number ("Falcon
        enamel plates" is a kind of product, not our dinner plate), or the word before it
        ending a noun phrase ("merino wool throw in oatmeal" of a throw blanket); a plural
        with our size or a variant word of our title is ours ("steel bottles: ... makes a
        750 ml one", "small soy candles", "enamel mugs in white and blue")."""
        said = [
            k
            for i, k in enumerate(keys)
            if (says_kind(stem(k), kind) or self._clipped(k, kind))
            and not _PEOPLE.intersection(keys[i + 1 : i + 2])  # "straw workers" (round 52)
        ]
        if said:
            return (
                self.plural_kind[sku]
                or any(k == stem(k) for k in said)
                or sizes_agree(sizes, self.sizes[sku])  # "bottles ... a 750 ml one"
                or bool(self.words[sku] & (VARIANT_STEMS | self.variants) & set(map(stem, keys)))
                or one_of_several(found, self.holding, keys)  # "the mesophilic one"
                or compares(" ".join(keys))  # "the shorter of the two <brand> ropes"
            )
        picked = bool(found & self.variants & self.words[sku])  # a variant of ours is said
        if self._lead_after_brand(sku, kind, keys, picked):
            return True
        # (and its material, when a variant of ours is said: "<brand> wool in zinc white" of
        # our "Rug Wool Skein, Zinc White", "<brand>'s size 4 silk in venetian red" of our
        # "Silk Beading Cord ..., Venetian Red"; rounds 50, 52)
        material = self.material_modifier.get(sku) if picked else None
        return any(
            modifier in found
            # (not "selling hatching eggs" of our "Egg Candler for Eggs": round 34)
            and modifier not in served_words(self.title_keys[sku])
            and self._modifier_ends(sku, modifier, keys, text, picked)
            for modifier in {self.modifier[sku], material} - {None}
        )

    def _said_of_it(self, sku, found, keys, names, colours, text, typed=False):
        """The checks of a title match said of our brand (module docstring); ``typed``: a
        type's name says what the product is (``_type_name``)."""
        kind = self._kind(sku)
        if (
            kind is not None
            and not typed
            and not self._says_kind(sku, kind, found, keys, sizes_of(text), text)
        ):
            return False  # the unit does not say what the product is
        title = self.words[sku]
        both = self._both_named(names, title)  # "<brand> Tops in Amaranth and Glaucous"
        if any(name - title and not both for name in names if name & title):
            return False  # another product of the brand
        if self.brand_name is not None and renamed(text, self.brand_name, self.products[sku].title):
            return False  # "<brand> 6S LiPo Battery" of our "4S LiPo Battery"
        if (
            kind is not None
            and _GENERAL.search(text)
            and any(k != stem(k) and stem(k) == kind for k in keys)
        ):
            return False  # "<brand>'s unroasted beans, whatever the origin, ..." (round 16)
        anchors = {kind, *(stem(word) for word in self.brand)} - {None}
        if not self._named_after_brand(sku, found, keys) and self._of_any(keys, anchors):
            return False
        title_colours = title & COLOUR_STEMS
        options = (
            COLOUR_OPTIONS if title_colours else ANY_OPTIONS if title & self.variants else None
        )
        if options and only_options(text, offered_in, options):  # unless "I have both"
            return False  # "the lamp in black and white": the colours it comes in, no variant
        materials = {stem(key) for key in keys} & MATERIAL_STEMS  # not "Solid Pewter" of ours
        if materials and title & MATERIAL_STEMS and not materials & title:
            return False
        return not (colours and title_colours and not colours & title_colours)

    def identify(self, text: str, branded: bool, carried: bool = False) -> dict[str, str]:
        """``{sku: how}`` of the products ``text`` names; ``how`` is ``"gtin"``, ``"sku"``
        or ``"title"``; ``branded``: the unit speaks of our brand; ``carried``: only because
        the sentence before did (``visibility_evidence.definite_before``)."""
        named = {}
        for run in _DIGIT_RUN.findall(text):
            for sku in self.gtins.get(re.sub(r"\D", "", run).lstrip("0"), ()):
                named[sku] = "gtin"
        for token in _SKU_TOKEN.findall(text):
            sku = self.skus.get(token.rstrip("._").casefold())
            if sku is not None and sku not in named:
                named[sku] = "sku"
        exact = self.exact_titles(text)
        for sku in exact | self._variants_beside(text, exact):
            named.setdefault(sku, "title")
        if self.brand and not branded:
            return named  # a title said of no brand of ours (or of another) is not ours
        if self.brand and brand_taken(
            exact_tokens(text), self.brand_tokens, self.exact, self.exact_lengths
        ):
            return named  # the brand is the exact title's after it (visibility_evidence)
        view = self._view(text)
        if (
            brand_aside(keys_of(text), self.brand, self.holding)  # the unit's own words
            or past_product(view.keys)
            or earlier_model(view.keys, self.brand)
            or catalogue_list(view.keys, self.brand, text)
            or any_maker(text)
        ):
            return named  # "<brand>'s founder ...", "<brand> does not make ...", "... dropped",
            # "<brand> sells vests, knives, pumps and fins" (round 25)
        titled = {
            sku: found
            for sku, found in view.candidates.items()
            if sku not in named and self.words[sku] and self._names_by_title(sku, found, view)
        }
        sized = {sku for sku in titled if sizes_agree(view.sizes, self.sizes[sku])}
        kinds = {sku: self._kind(sku) for sku in titled}
        variants = COLOUR_STEMS | VARIANT_STEMS | self.variants
        titled = unclaimed_words(titled, self.words, view.keys, MIN_FOUND, sized, kinds, variants)
        # the brand leads into a product's words, singled out or not ("<brand> Pigment Ink
        # Pad" of two colours, then "a logbook page": round 13)
        led = brand_leads(view.keys, self.brand, view.candidates) if self.brand else None
        besides = set().union(*(view.candidates[sku] for sku in led or ()))
        for sku, found in titled.items():
            referred = carried or (led is not None and sku not in led)
            if (
                not referred
                or definite_before(view.keys, found, besides)
                or (
                    not carried
                    and variant_of_led(sku, led, self.words, self._kind, variants, view.keys)
                )
            ):
                named[sku] = "title"
        return named

    def _view(self, said):
        """What ``_names_by_title`` reads of the unit ``said``."""
        text = self._without_other_brands(said) if self.brand else said
        text = without_makers(text, self.compounds.pairs)  # "<brand> is a kite maker"
        ours = self.holding.keys() | self.brand_stems  # ("250 g of <brand> worms": round 34)
        text = without_other_amounts(text, ours)  # "60 cm of loom waste" (round 17)
        sizes = self._sizes_said(without_other_amounts(said, ours), text)
        present = self.compounds.read(text, set(words_of(text)))
        keys = self.compounds.split_keys(keys_of(text))
        present -= colours_of_other_things(said, self.holding, self.brand_stems, self.variants)
        fixed = self.spelling.fix(keys, self.holding, text)  # "Shelter Tnet" (round 14)
        spelt = {stem(keys[index]): word for index, word in fixed.items()}
        if fixed:
            keys = [fixed.get(index, key) for index, key in enumerate(keys)]
            present |= set(fixed.values())
        present |= size_words(keys, self.holding, self.brand_stems)  # "the medium <brand> vest"
        width = len(self.brand)
        candidates = self._found(present)
        return UnitView(
            text=text,
            keys=keys,
            sizes=sizes,
            names=[
                {spelt.get(word, word) for word in name}
                for t in {text, said}
                for name in [
                    *self._others_of_brand(t),
                    *title_cased(t, self.brand_stems, self.holding),
                ]
            ]
            if self.brand
            else [],
            colours=present & COLOUR_STEMS,
            numbers=bare_numbers(text)
            - {  # numbers without a unit, not a size's
                amount for unit, amounts in sizes.items() if unit[:1] != "#" for amount in amounts
            }
            - counts_of_other_things(text, self.counted),  # "for 24 years" (round 31)
            after_brand={  # the words right after the brand: a title's may follow
                keys[i + width]
                for i in range(len(keys) - width)
                if keys[i : i + width] == self.brand
            },
            candidates=candidates,
            most=(
                most_words_per_kind(
                    {sku: (found, self._kind(sku)) for sku, found in candidates.items()},
                    keys,
                    MIN_FOUND,
                )
                if self.brand
                else {}
            ),
            said=said,
        )

    def _names_by_title(self, sku, found, view):
        """True when the unit (``view``) names ``sku`` by the words of its title ``found``
        in it (module docstring)."""
        title, kind, keys = self.words[sku], self._kind(sku), view.keys
        own_variant = title & self.variants  # its variant's words (round 50)
        if kind is not None and kind not in found and any(says_kind(stem(k), kind) for k in keys):
            found = found | {kind}  # "the keylock draw" of our "Keylock Quickdraw"
        if (
            found != title
            and MIN_FOUND <= len(found) < view.most.get(kind, 0)
            and not (own_variant and own_variant <= found)  # (its own variant's words pick
        ):  # it: "both <brand> baskets, massicot and zinc white"; round 50)
            return False  # another product of its kind has more of its words here
        sizes = unclaimed(view.text, view.sizes, sku, view.candidates, self.sizes, MIN_FOUND)
        if sizes_conflict(sizes, self.sizes[sku]) or count_conflict(sizes, self.sizes[sku]):
            return False  # another size or count than ours
        if not self.brand:
            enough = len(found) >= TITLE_MIN_WORDS and len(found) / len(title) >= TITLE_COVERAGE
            return enough and self._single_out_sized(
                found, sku, view.sizes, view.text, view.numbers
            )
        found = found - readers_own(keys, self.title_keys[sku])  # "keep your pedals flat"
        found = found - NUMBER_STEMS  # "two-tone" of our "Coiler with Two Rods" (round 34)
        picked = sizes_agree(view.sizes, self.sizes[sku])  # "the 25 cm <brand> wheel bats"
        if not picked:  # "<brand> puzzles ..." of our "Puzzle Board" (round 24)
            found = found - line_words(keys, self.brand, found, self.title_keys[sku], kind)
        typed = bool(found) and self._type_name(found, view.text, keys, picked)
        named_type = found - self.variants  # a variant's word beside it picks one too: "the
        if not typed and named_type and named_type != found:  # lovat <brand> abada" (round 41)
            typed = self._type_name(named_type, view.text, keys, True)
        # (the name before a comma, said right after the brand, is the whole: "<brand>'s
        # blocking pins" of our "Blocking Pins, Box of 100"; rounds 40, 45)
        name = self.name_words[sku]  # (filled by ``_kind``, called above)
        named = bool(name) and name <= found and name_after_brand(keys, self.brand, name)
        plural = (found, named) if self.plural_kind[sku] and not picked else None
        enough = (
            len(found) >= MIN_FOUND
            or found == title
            or typed
            or kind_and_size(found, kind, self.sizes[sku], view.sizes, self.modifier[sku])
            or (
                bool(found)
                and next(iter(self.title_keys[sku]), None) in view.after_brand
                and self._lead_after_brand(sku, kind, keys)
            )
        )
        return (
            enough
            and not without_our_words(keys, title)
            and (
                picked
                or variant_word(found, sku, self.holding, self.words)
                or bool(own_variant)
                and own_variant <= found  # "<brand> cones in zinc white"
                or not brand_kinds(keys, self.brand, kind, self.modifier[sku], plural, found)
            )
            and not swapped_word(keys, self.title_keys[sku], title | self.brand_stems)
            and not (  # "<brand> Inflatable Snorkel Vest, Child" of our "..., Adult"
                self.brand_name is not None
                and swapped_last_part(view.said, self.brand_name, self.products[sku].title)
            )
            and self._said_of_it(sku, found, keys, view.names, view.colours, view.text, typed)
            and self._single_out_sized(found, sku, view.sizes, view.text, view.numbers)
        )

    def read(self, answer: str | None) -> tuple[list[Unit], list[dict[str, str]], bool]:
        """``(units, [{sku: how} per unit], brand named anywhere)`` for ``answer``."""
        answer = plain_answer(answer or "")  # (rounds 34 to 39)
        units = answer_units(_MARKS.sub("", answer))  # "Knife™ with ..." (round 13)
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
            carried = unit.rank is None and branded and not named_here
            found.append(self.identify(unit.text, branded, carried))
            if unit.rank is not None and index + 1 < len(units) and units[index + 1].rank is None:
                branded_list = False
        self._follow_ups(units, found)
        return units, found, brand_anywhere
