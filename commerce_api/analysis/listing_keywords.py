"""Keyword suggestions: words common in the titles of products of the same kind, in the
same category, and missing from a title.

A product's *kind* is the head noun of its title: the last word of the part before the
first comma, dash, bracket or "with/for/in/of" ("Enamel camping mug with steel rim, green"
is a mug; "Soy wax candle in a tin" a candle). Its neighbours are the other titles of its
category that carry that noun, so a wool blanket is compared with blankets, never with the
candles that share its category, and a ceramic cup with nothing when the shop sells no
other cup. Among the neighbours, a term's weight is the share of them that use it times its
inverse document frequency over the whole catalogue, ``log(1 + N / df)``, so words every
title has (a shop's own brand) weigh little. A term must also go with what the title says
besides its kind: it shares a neighbour title with one of the title's own words (a cotton
blanket is not offered "wool" unless some blanket is both). The product's own title is left
out of the counts. Colour words (a variant's, not a kind's) are never suggested, and a
material only to a title that names none, when nearly every neighbour shares it.

That alone (titles only) rarely finds a term that is surely true of the product. When the
product has a description, the description is the evidence instead: a *phrase* (one to
three words, "leak-proof", "dishwasher safe", "soy wax") that at least ``MIN_TITLES``
other titles of the category and ``MIN_SHARE`` of them use, that the description says of
the product (not after "not", "no", "without"...), and that shares no word with the title
is suggested; a longer phrase is preferred to its parts, and a phrase with a word most
titles of the whole catalogue carry (the shop's brand) is not. A description that does not say it
suggests nothing: a term common in the category is not true of every product in it, and
what it says of a thing the product works with ("works with dimmable LED bulbs",
"compatible with ...", "takes ...") is no evidence. A phrase whose last words end a noun
phrase of the title is suggested whole ("LED desk lamp" for "Desk Lamp, Dimmable"), unless
its new words are a suggestion on their own.

Round 7 (``listing_referents``): words said of another thing the buyer has or uses ("after
your electric toothbrush", "fits any lunch box", "unlike a ... lunch box"), of a part ("a
noise cancelling microphone"; of a product of another kind than the category's, any
modifier: "a waterproof travel pouch"), or in a description that says the product is not
of the category's kind ("They are not wireless earbuds") are no evidence; the noun phrase
that opens the description names the product's kind ("An oversized bath towel" of "Cotton
Bath Sheet").

Round 8: an accessory of the category's kind ("Keycap Set for Any Mechanical Keyboard")
gets no suggestion; a term before "of" another thing or before a denied verb is no
evidence (``listing_referents``); "X and Y" terms of the titles ("wet and dry") are
suggested whole, never by a half (``listing_pairs``).

Round 9: a product whose title names no kind of the category gets no suggestion when its
description names one past its opening noun phrase (an accessory: "Powers a dash cam" of
"Hardwire Kit"); a term placed on another thing ("The flick lock is only on our adult
poles") is no evidence (``listing_referents``).

Round 11: a part of a longer term of the category's titles ("door opener" of "garage door
opener", "night" of "night vision") is no suggestion (``listing_parts``); terms joined by
"to" ("lean to steer") are pairs (``listing_pairs``); of a whole term and its new words,
the whole wins when the titles nearly always say them in it and the title has its end
("garage door opener" of "Screw Drive Opener"); "see our X" and "works on X" speak of
another thing (``listing_referents``).
"""

import math
import re
from collections import Counter
from typing import Any

from .listing_asides import without_asides
from .listing_clauses import spec_lines
from .listing_pairs import half_of_a_pair, joined_pairs, pairs_said
from .listing_parts import PART_SHARE, beside_own_term, parts_of_longer_terms, two_terms
from .listing_phrases import (
    MATERIAL_STEMS,
    MAX_PHRASE,
    numbered_phrases,
    phrases_of,
    property_word,
    standalone_words,
)
from .listing_referents import (
    CLAUSE_END,
    COLOURS,
    PHRASE_TOKEN,
    cached_stem,
    denies_kind,
    modifier,
    names_a_served_kind,
    of_a_part,
    opening_phrase,
    phrase_words,
    serves_a_kind,
    usable,
)
from .listing_title import (
    PROMOTIONAL_WORDS,
    STOPWORDS,
    has_letter,
    key,
    stem,
    strip_promotional,
    unpromoted_tokens,
)

_KITS = frozenset(["kit", "set", "bundle"])  # products of several things
MIN_TITLES = 2  # a term must appear in at least this many neighbour titles
MIN_SHARE = 0.3  # ... and in at least this share of them
NOUN_SHARE = 0.5  # ... or this share for a one-word thing ("drum"; round 25)
MAX_TERMS = 5
CORPUS_LIMIT = 50_000  # titles read per job (the most recently updated first)
MATERIAL_CONSENSUS = 0.75  # share of the neighbours that must share a material
_NOT_KEYWORDS = STOPWORDS | PROMOTIONAL_WORDS | COLOURS
SHOP_WIDE_SHARE = 0.5  # a phrase this share of all titles has says nothing of one product
_PHRASE_TOKEN = PHRASE_TOKEN
_CLAUSE_END = CLAUSE_END
_phrase_words = phrase_words
_stem = cached_stem
_usable = usable
_HEAD_END = re.compile(
    r",|\s[-\u2013|/]\s|\(|\s(?:with|for|in|of|from|by)\s|\ssize\s+\w+\b", re.IGNORECASE
)  # ("Impact Vest Size M": a vest; round 25)


def title_terms(title: str | None) -> set[str]:
    """The distinct keyword terms of a title (letters, 3+ characters, no stopwords, no
    promotional words or phrases)."""
    terms = set()
    for token in unpromoted_tokens(title):
        word = key(token)
        if len(word) >= 3 and has_letter(word) and word not in _NOT_KEYWORDS:
            terms.add(word)
    return terms


def kind_of(title: str | None) -> str | None:
    """The stem of the title's head noun (see the module docstring), or None."""
    head = _HEAD_END.split(strip_promotional(title or ""), maxsplit=1)[0]
    for token in reversed(head.split()):
        word = key(token)
        if len(word) >= 3 and word.isalpha() and word not in STOPWORDS | PROMOTIONAL_WORDS:
            return stem(word)
    return None


def category_key(category: str | None) -> str:
    return (category or "").strip().casefold()


_SET_WORDS = re.compile(r"[^\W_]+")


class KeywordCorpus:
    """The catalogue's titles as term sets, per category, and each term's document count."""

    def __init__(self, rows=()):
        self.titles = 0
        self.document_frequency = Counter()
        # category key -> {term stem -> [the term stems of each title that has it]}
        self.by_category = {}
        self.spelling = {}  # term stem -> the spelling first seen
        # category key -> its titles; their phrases are counted when first asked for
        self.category_titles = {}
        self.phrases = {}  # category key -> (titles, {phrase -> titles that have it})
        self.phrase_spelling = {}
        self.kinds = {}  # category key -> its titles' common kinds, counted when first asked
        self.pairs = {}  # category key -> its titles' "X and Y" pairs, counted when first asked
        self.longer = {}  # category key -> listing_parts.parts_of_longer_terms of its titles
        # category key -> the phrases its titles mostly say after one number ("10-Year
        # Battery"; not "12 Grind Settings" beside "31 Grind Settings")
        self.measures = {}
        for category, title in rows:
            self.add(category, title)

    def add(self, category: str | None, title: str | None) -> None:
        terms = title_terms(title)
        stems = frozenset(stem(term) for term in terms)
        self.titles += 1
        self.document_frequency.update(stems)
        for term in terms:
            self.spelling.setdefault(stem(term), term)
        name = category_key(category)
        if name:
            self.category_titles.setdefault(name, []).append(title)
            self.phrases.pop(name, None)
            self.kinds.pop(name, None)
            self.pairs.pop(name, None)
            self.longer.pop(name, None)
        if name:
            titles_with = self.by_category.setdefault(name, {})
            for term in stems:
                titles_with.setdefault(term, []).append(stems)

    def suggest(
        self,
        category: str | None,
        title: str | None,
        included: bool = True,
        limit: int = MAX_TERMS,
        description: str | None = None,
    ) -> list[dict[str, Any]]:
        """``[{term, score, share}]``: terms of the category missing from ``title`` that
        ``description`` says of the product (when it has one; else terms of the product's
        kind, see the module docstring); ``included``: the title was added to the corpus
        (it is left out)."""
        if description and description.strip():
            return self._described(category, title, description, included, limit)
        name, kind = category_key(category), kind_of(title)
        if not name or name not in self.by_category or kind is None:
            return []
        own = frozenset(stem(term) for term in title_terms(title))
        neighbours = list(self.by_category[name].get(kind, ()))
        if included and own in neighbours:
            neighbours.remove(own)
        total = self.titles - (1 if included else 0)
        if len(neighbours) < MIN_TITLES or total < 1:
            return []
        # a term must go with what the title already says: it shares a neighbour title with
        # one of the title's own words beside its kind ("enamel" never reaches a stoneware
        # mug unless some title is both), unless the title says nothing beside its kind
        described = own - {kind}
        counts = Counter(term for stems in neighbours for term in stems if term not in own)
        if described:
            compatible = {term for stems in neighbours if stems & described for term in stems}
            counts = Counter({t: n for t, n in counts.items() if t in compatible})
        names_material = bool(own & MATERIAL_STEMS)
        scored = []
        for term, titles_with in counts.items():
            share = titles_with / len(neighbours)
            if titles_with < MIN_TITLES or share < MIN_SHARE:
                continue
            if term in MATERIAL_STEMS and (names_material or share < MATERIAL_CONSENSUS):
                continue
            df = self.document_frequency[term] - (1 if included and term in own else 0)
            score = share * math.log(1 + total / max(df, 1))
            scored.append((-score, self.spelling[term], share))
        scored.sort()
        return [
            {"term": term, "score": round(-neg, 3), "share": round(share, 3)}
            for neg, term, share in scored[:limit]
        ]

    def _category_phrases(self, name):
        """``(titles, {phrase: titles that have it}, its two-word phrases, those of
        ``MIN_TITLES``)`` of a category, counted once."""
        if name not in self.phrases and name in self.category_titles:
            counts, numbered = Counter(), Counter()
            for title in self.category_titles[name]:
                phrases = phrases_of(title)
                counts.update(phrases.keys())
                numbered.update(numbered_phrases(title).items())
                for phrase, spelling in phrases.items():
                    self.phrase_spelling.setdefault(phrase, spelling)
            self.phrases[name] = (
                len(self.category_titles[name]),
                counts,
                {phrase for phrase in counts if len(phrase) == 2},  # two-word phrases
                {p for p, n in counts.items() if len(p) == 2 and n >= MIN_TITLES},  # terms
            )
            self.longer[name] = parts_of_longer_terms(
                self.category_titles[name], property_word, MIN_TITLES
            )
            pairs, spelling = joined_pairs(self.category_titles[name])
            self.pairs[name] = pairs
            self.measures[name] = {p: k for (p, k), n in numbered.items() if 2 * n > counts[p]}
            for pair, spelt in spelling.items():
                self.phrase_spelling.setdefault(pair, spelt)
            self._with_set(self.category_titles[name], counts)
        return self.phrases.get(name)

    def _with_set(self, titles, counts):
        """A term most of whose titles say it before "set" is spelt with it: "Nozzle Set"
        is the term "nozzle set" ("set" is a stop word of titles, "Set of 3"; round 38), and
        so is one said after it: "Set Point" (round 46).
        One pass over the titles: the words before each "set" that no "of" follows."""
        before_set, after_set = Counter(), Counter()
        for title in titles:
            words = _SET_WORDS.findall(title.casefold())
            for index, word in enumerate(words):
                if word not in ("set", "sets") or words[index + 1 : index + 2] == ["of"]:
                    continue
                before_set.update(
                    " ".join(words[start:index]) for start in range(max(0, index - 3), index)
                )
                after_set.update(  # "Set Point" (round 46)
                    " ".join(words[index + 1 : end])
                    for end in range(index + 2, min(len(words), index + 4) + 1)
                )
        for phrase, n in counts.items():
            spelling = self.phrase_spelling[phrase]
            said = spelling.casefold().replace("-", " ")
            if n >= MIN_TITLES and 2 * before_set[said] > n:
                self.phrase_spelling[phrase] = spelling + " set"
            elif n >= MIN_TITLES and 2 * after_set[said] > n:
                self.phrase_spelling[phrase] = "set " + spelling

    def _category_kinds(self, name):
        """The kinds (``kind_of``) of at least ``MIN_TITLES`` and ``MIN_SHARE`` of the
        category's titles, counted once."""
        if name not in self.kinds:
            titles = self.category_titles.get(name, ())
            found = Counter(kind_of(title) for title in titles)
            self.kinds[name] = {
                kind
                for kind, n in found.items()
                if kind and n >= MIN_TITLES and n >= MIN_SHARE * len(titles)
            }
        return self.kinds[name]

    def _described(self, category, title, description, included, limit):
        """The suggestions the product's description bears out (module docstring)."""
        entry = self._category_phrases(category_key(category))
        if entry is None:
            return []
        description = without_asides(description)  # not said of another thing
        description = spec_lines(description)  # "Smokeless: no" (round 14)
        own = phrases_of(title)
        own_words = {word for phrase in own for word in phrase}
        titles, counts, known, terms = entry
        others = titles - (1 if included else 0)
        everywhere = self.titles - (1 if included else 0)
        if others < MIN_TITLES:
            return []
        alone = standalone_words(description, known, own_words)
        own_joined = {"".join(phrase) for phrase in own}
        kinds = self._category_kinds(category_key(category))
        said = _said_of_the_product(title, description, own_words, counts, kinds, terms)
        opening = opening_phrase(description)
        pairs = self.pairs.get(category_key(category), {})
        longer = self.longer[category_key(category)]
        for pair in pairs_said(description, pairs, said):
            said[pair] = self.phrase_spelling[pair]  # "wet and dry", said whole
        candidates, numbers, kit = [], numbered_phrases(description), kind_of(title) in _KITS
        for phrase, spelling in said.items():
            if "".join(phrase) in own_joined:
                continue  # the title says it already
            if (
                own_words.intersection(phrase)
                and not _extends(phrase, spelling, title, own_words, description)
                and not _names_the_kind(phrase, opening, kinds | {kind_of(title)}, own_words)
                and not beside_own_term(phrase, own, counts, others, MIN_TITLES, MIN_SHARE)
            ):
                continue  # the title says a part of it already
            if (
                len(phrase) == 1
                and (
                    (kit and not modifier(spelling))  # a kit's part ("Energiser, 200 m of tape")
                    or (
                        phrase[0] not in alone
                        and not (phrase[0] in kinds and opening[-1:] == phrase)
                    )
                    or half_of_a_pair(phrase[0], pairs, counts, MIN_TITLES)
                )
            ):
                continue  # a word cut out of a phrase, or said of another part
            if phrase in longer and phrase not in pairs:
                continue  # a part of a longer term ("door opener" of "garage door opener")
            if (
                len(phrase) > 1
                and phrase not in pairs
                and _cut_before(phrase, spelling, description, counts)
            ):
                continue  # cut before its last word's own phrase ("digital kitchen" scale)
            in_title = phrase in own or phrase in pairs_said(title, pairs, own)
            with_it = (counts.get(phrase, 0) or pairs.get(phrase, 0)) - (
                1 if included and in_title else 0
            )
            share = with_it / others
            noun = len(phrase) == 1 and not modifier(spelling)  # a thing: a part, a tool
            if with_it < MIN_TITLES or share < (NOUN_SHARE if noun else MIN_SHARE):
                continue
            shop_wide = max(self.document_frequency.get(word, 0) for word in phrase)
            if shop_wide > SHOP_WIDE_SHARE * everywhere and everywhere > others:
                continue  # most titles of the whole shop carry a word of it: the brand
            measure = self.measures[category_key(category)].get(phrase)
            if measure is not None and numbers.get(phrase) != measure:
                continue  # a measure's words without its number ("year battery"; round 18)
            candidates.append((-len(phrase), -share, phrase))
        candidates = _fewest_new_words(candidates, own_words, counts)
        candidates = [
            c
            for c in candidates
            if not two_terms(c[2], own_words, counts, others, MIN_TITLES, MIN_SHARE)
        ]
        return self._terms(category, candidates, numbers, limit)

    def _terms(self, category, candidates, numbers, limit):
        """The suggestions of ``candidates``, measures with their numbers."""
        measures = self.measures[category_key(category)]
        return [
            {
                "term": _with_number(
                    self.phrase_spelling.get(phrase, " ".join(phrase)),
                    numbers.get(phrase) if phrase in measures else None,
                ),
                "score": round(share, 3),
                "share": round(share, 3),
            }
            for phrase, share in _longest_first(candidates)[:limit]
        ]


def _with_number(spelling, number):
    """A measure's spelling with the number the description says before it ("10 year
    battery"; round 18), else ``spelling``."""
    return spelling if number is None else f"{number} {spelling}"


def _longest_first(candidates):
    """``[(phrase, share)]``: the candidates, longer phrases first, none inside a chosen
    one ("leak" when "leak proof" is suggested), by share."""
    chosen = []
    for _, negative_share, phrase in sorted(candidates):
        if any(_inside(phrase, longer) for longer, _ in chosen):
            continue
        chosen.append((phrase, -negative_share))
    chosen.sort(key=lambda item: (-item[1], item[0]))
    return chosen


def _said_of_the_product(title, description, own_words, counts, kinds, terms):
    """``phrases_of(description)`` without what is said of another thing, after a
    negation or of a part (``listing_referents``), or ``{}`` when the description says
    the product is not of the category's kind ("They are not wireless earbuds")."""
    if denies_kind(description, counts, kinds, MIN_TITLES):
        return {}
    opening = opening_phrase(description)  # "A complete soil auger: head, ..." (round 52)
    if serves_a_kind(title, kind_of(title), kinds) and opening[-1:] not in {(k,) for k in kinds}:
        return {}  # an accessory: its description speaks of what it serves
    if names_a_served_kind(description, kind_of(title), kinds):
        return {}  # likewise, its title naming no kind of the category
    # a product of the category's kind: the state of its main part is its own ("a
    # leak-proof lid", "a cushioned midsole"), what a part does is not ("a noise
    # cancelling microphone"); another kind of product: neither ("a waterproof pouch")
    doing_only = kind_of(title) in kinds

    def of_part(words, start, end):
        return of_a_part(words, start, end, own_words, kinds, terms, doing_only)

    return phrases_of(description, negated=False, of_part=of_part)


def _names_the_kind(phrase, opening, kinds, own_words):
    """True when ``phrase`` ends the description's ``opening`` noun phrase, its last word
    is one of the ``kinds`` and it adds no other word to the title's (``own_words``): the
    description says what the product is in the category's words ("A dog bed with ..." of
    "Bolster Bed for Senior Dogs", "An oversized bath towel" of "Cotton Bath Sheet"; not
    "A digital kitchen scale" of "Kitchen Scale": "digital" is a claim of its own)."""
    return (
        len(phrase) > 1
        and phrase[-1] in kinds
        and set(phrase[:-1]) <= own_words
        and len(opening) >= len(phrase)
        and opening[-len(phrase) :] == phrase
    )


def _extends(phrase, spelling, title, own_words, description):
    """True when ``phrase`` is new words before the end of a noun phrase of the title
    ("LED desk lamp" of "Desk Lamp, Dimmable", "memory foam" of "Shredded Foam, Washable";
    not "non-stick frying" of "Frying Pan"): what it adds is said of the title's own thing.
    Its first word must not be the end of a hyphenated word ("on-ear headphones")."""
    first = spelling.split()[0]
    if re.search(r"\w-\s*" + re.escape(first) + r"\b", description, re.IGNORECASE):
        return False
    ends = _phrase_ends(title)
    for split in range(1, len(phrase)):
        head, tail = phrase[:split], phrase[split:]
        if tail in ends and not own_words.intersection(head):
            return True
    return False


def _phrase_ends(title):
    """The runs of words that end a noun phrase of ``title`` (before a comma, dash, bracket,
    "with", "for"... or its end), as stems."""
    ends = set()
    for part in re.split(r",|\s[-\u2013|/]\s|[()]|\s(?:with|for|in|of|from|by)\s", title or ""):
        words = [w for w in _phrase_words(part) if w is not None]
        if not words or not _usable(words[-1]):
            continue
        stems = [_stem(w) for w in words]
        for start in range(max(0, len(stems) - MAX_PHRASE), len(stems)):
            if all(_usable(w) for w in words[start:]):
                ends.add(tuple(stems[start:]))
    return ends


def _fewest_new_words(candidates, own_words, counts):
    """The candidates without the extensions of the title's own phrase that give way: to
    the new words alone when they are a suggestion by themselves ("insulated", not
    "insulated stainless steel"), unless the category's titles say that word mostly in the
    phrase ("electric kettle", not "electric"), and to a shorter extension ("kitchen
    scale", not "digital kitchen scale")."""
    phrases = {phrase for _, _, phrase in candidates}
    kept_whole = (
        {
            phrase[:1]
            for phrase in phrases
            if own_words.intersection(phrase)
            and len(phrase) == 2
            and counts.get(phrase, 0) * 2 >= counts.get(phrase[:1], 0)
        }
        | {  # "garage door opener", not "garage door", of "Screw Drive Opener" (round 11)
            phrase[:split]
            for phrase in phrases
            for split in range(1, len(phrase))
            if len(phrase) > 2
            and set(phrase[split:]) <= own_words
            and not own_words.intersection(phrase[:split])
            and counts.get(phrase, 0) >= PART_SHARE * counts.get(phrase[:split], 0)
        }
    )
    return [
        (length, share, phrase)
        for length, share, phrase in candidates
        if phrase not in kept_whole
        and (
            not own_words.intersection(phrase)
            or not any(
                phrase[:split] in phrases - kept_whole
                or (len(phrase) - split > 1 and phrase[split:] in phrases)
                for split in range(1, len(phrase))
            )
        )
    ]


def _cut_before(phrase, spelling, description, counts):
    """True when the description says ``phrase`` before a word its last word forms a
    phrase with that more of the category's titles use ("digital kitchen" of "a digital
    kitchen scale": "kitchen scale" is the category's term; "memory foam pillow" keeps
    "memory foam")."""
    after = re.search(re.escape(spelling) + r"[\s\-]+([^\W\d_]+)", description, re.IGNORECASE)
    if after is None:
        return False
    following = (phrase[-1], _stem(after.group(1).casefold()))
    return counts.get(following, 0) > counts.get(phrase, 0)


def _inside(short, long):
    """True when the phrase ``short`` is a run of the phrase ``long``."""
    width = len(short)
    return any(long[i : i + width] == short for i in range(len(long) - width + 1))
