"""What the words of a description are said of (round 7 of issue 30): the product, or
another thing. A keyword suggestion needs the description to say the term *of the
product*; these rules find the words said of something else, so that they are no evidence.

- *Another thing the buyer has or uses with ours*: the noun phrase after "your", "any",
  "other" or "another" ("to use after your electric toothbrush", "fits any lunch box"),
  and the rest of the clause after a word whose object is another thing: "works with",
  "compatible with", "pairs with", "takes", "accepts", "fits", "replaces", "unlike",
  "instead" ("Memory foam pads that replace the worn cushions of most foldable
  headphones"); the noun phrase after "our" and a verb that sends the buyer to another
  product ("for the desk see our charging stand", "try our electric griddle"; round 11).
- *Another thing's term, said before "of" and a determiner of another thing* (round 8:
  "the memory presets of our electric desks are not available here", "use the laundry
  mode of a full-size unit instead"): both noun phrases are another thing's.
- *A term placed on another thing* (round 9: "The flick lock is only on our adult poles",
  "Dolby Atmos comes only with our larger models"): the noun phrase before "is"/"are"/
  "comes"..., a preposition and a determiner of another thing (not "a", "the", "its") is
  that thing's, and so is the phrase after it.
- *A term denied after it* (round 8: "Night mode is not offered here", "the USB port
  isn't included"): the noun phrase right before a denied verb is not the product's.
- *A part*: a term followed by another noun is said of that noun ("a noise cancelling
  microphone", "a dishwasher safe divider"), unless that noun (or the two-word term of
  the category it starts) is a word of the title or the kind of the category's titles
  ("these noise cancelling headphones", "a cordless electric shaver"). A following word
  ending in "s" with no determiner before the term may be a verb ("Active noise
  cancelling cuts bus rumble"): the term is then said of the product. Degree words
  ("enough", "too", "most") are no nouns ("compact enough for a wash bag").
- *The product's own kind*: the noun phrase that opens the description after "a"/"an"
  names the product ("A dog bed with a firm base" of "Orthopedic Bolster Bed for Senior
  Dogs"), so a term ending it with a kind of the category is said of the product even
  when the title says some of its words in another order.
- *An accessory of the category's kind* (round 8, ``serves_a_kind``: "Keycap Set for Any
  Mechanical Keyboard", "Goggle Lens Case"): its description speaks of what it serves, so
  nothing in it is evidence. So is one whose title names no kind of the category while its
  description names one past its opening noun phrase (round 9, ``names_a_served_kind``:
  "Extended Desk Mat" sized "for a keyboard and a gaming mouse", "Hardwire Kit" that
  "powers a dash cam").
"""

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from .listing_title import (
    PROMOTIONAL_WORDS,
    STOPWORDS,
    fold_spelling,
    has_letter,
    stem,
    unpromoted_tokens,
    word_set,
)

COLOURS = word_set(
    "white black grey gray blue green red yellow orange pink purple brown beige cream "
    "navy teal natural ivory"
)
PHRASE_TOKEN = re.compile(r"[^\W_]+")
CLAUSE_END = re.compile(r"[.;:!?]")
# words after which a description speaks of something the product goes with
_WITH_OF_ANOTHER = word_set("works work compatible use used pairs pair paired combined")
_WORKS = word_set("works work")  # "the fingertips do not work on a touchscreen" (round 11)
# words whose object, to the end of the clause, is another thing than the product
_CLAUSE_OF_ANOTHER = word_set("takes accepts requires require needs need upgrade upgrades")
# words whose object, the noun phrase after them, is another thing than the product
_OBJECT_IS_ANOTHER = word_set("fits replace replaces replacing unlike instead")
# what the product fits or replaces, and what that thing has ("fits our pencil sharpeners
# with auto stop"; round 15)
_FITS = word_set("fits fit replaces replace replacing")
_HAVING_WORDS = word_set("with featuring having")
_JOINS = word_set("and or")
# what the product stands in for: the noun phrases before and after ("a budget food
# dehydrator alternative", "an alternative to a food dehydrator"; round 13)
_STANDS_IN = word_set("alternative alternatives substitute substitutes")
# people named by a term before them ("cordless drill users"; round 13): not the product
_PEOPLE = word_set("users user owners owner fans lovers buyers")
# what the buyer already has ("the smoke alarms you already have") and where the product
# stands beside another thing ("fit it beside the ...", "next to a ..."; round 18)
_OWNING = word_set("have own use bought got run keep")
_OWNING_ADVERBS = word_set("already now still probably may might")
_BESIDE = word_set("beside besides alongside")
# what another model has, to the end of its clause ("the 12 V version has an LED light")
_HAVING = word_set("has have comes come adds add gets get includes include offers features")
_MODEL_REACH = 4  # words between the determiner and "model", "version"...
# what the product becomes with others, after "into" and one of these ("two twin beds zip
# together into one queen size bed"; not "fat runs into a drip tray"; round 12)
_BECOMES = word_set("turn turns convert converts zip zips join joins combine combines together")
# another product of the shop named by its term ("the magnetic resistance model is RM-3", "a
# sleep timer version is planned"; round 12): the noun phrase before one of these, unless
# "this" opens it
_OTHER_MODELS = word_set("model models version versions variant variants edition editions")
# what the product is for, after "for" and one of these ("too tall for a desk"; round 12)
_FOR_ANOTHER = word_set("a an your any")
# determiners of another thing than the product: the noun phrase after them
_ANOTHER = word_set("your any other another")
# verbs that send the buyer to another product of the shop ("for the desk see our charging
# stand", "try our electric griddle"; round 11): the noun phrase after them and "our"
_REFERRALS = word_set("see try browse visit consider choose pick")
# determiners after "of" of another thing than the product ("the laundry mode of a
# full-size unit", "the memory presets of our electric desks"); not "of this", "of its"
_OF_ANOTHER = word_set("a an our other another any most some many all every their your")
# a verb denied after its subject: the noun phrase before it is not the product's ("Night
# mode is not offered here", "the USB port isn't included")
# a term placed on another thing (round 9): the noun phrase before one of these verbs, at
# most two of the words after them and a preposition, then a determiner of another thing
_PLACING_VERBS = word_set("is are comes come sits sit stays stay remains remain")
_PLACING_WORDS = word_set("only just also exclusively found available fitted offered sold")
_PLACES = word_set("on in with for from at")
_PLACE_OF_ANOTHER = _OF_ANOTHER - {"a", "an"}
_AUXILIARIES = word_set("is are was were does do did can will has have")
_NEGATED_VERBS = word_set("isn aren wasn weren doesn don didn can won hasn haven")
_PARTICLES = word_set("up down off out over")
DETERMINERS = word_set("a an the this that these those its each every one our")
# closed-class words (verbs "to be" and "to have", pronouns, conjunctions, prepositions,
# adverbs): no nouns, and the end of a noun phrase
FUNCTION_WORDS = word_set(
    "is are was were be been being has have had do does did can could will would shall "
    "should may might must it they them we you he she his her their this that these those "
    "which who whom whose what when where while so but yet nor not no too also just only "
    "then than very even still without into onto over under inside outside through after "
    "before during until up down off out about against between behind around across along "
    "near like as if because once here there all both"
)
# degree words: they stand beside an adjective and are no nouns ("compact enough")
DEGREE = word_set("most more less least very so too quite really enough fairly")
# endings of words that describe (adjectives, "-ing" forms, compound adjectives such as
# "dishwasher safe", "BPA free", "airtight"): such a term before a noun is said of it
_MODIFIER_ENDINGS = (
    "ed", "able", "ible", "proof", "less", "ive", "ant", "ent", "ful", "ous", "ic", "ing",
    "safe", "free", "friendly", "resistant", "tight",
)  # fmt: skip

_STEMS: dict[str, str] = {}


def cached_stem(word: str) -> str:
    """``stem(word)`` in American spelling (``fold_spelling``: "odour control" of a title
    that says "Odor Control"; round 12), remembered for the most frequent words (the
    first 200,000 seen)."""
    found = _STEMS.get(word)
    if found is None:
        found = stem(fold_spelling(word))
        if len(_STEMS) < 200_000:
            _STEMS[word] = found
    return found


def usable(word: str | None) -> bool:
    """True when ``word`` may be part of a keyword phrase (no stop, promotional or
    colour word, a letter, 2+ characters)."""
    return (
        word is not None
        and has_letter(word)
        and len(word) >= 2
        and word not in STOPWORDS
        and word not in PROMOTIONAL_WORDS
        and word not in COLOURS
    )


def phrase_words(text: str | None) -> list[str | None]:
    """The lower-case words of ``text`` (hyphens and punctuation split words), a ``None``
    between clauses, and promotional words dropped."""
    words: list[str | None] = []
    for clause in CLAUSE_END.split(" ".join(unpromoted_tokens(text))):
        words.append(None)
        words.extend(m.group().casefold() for m in PHRASE_TOKEN.finditer(clause))
    return words


def another_thing(words: list[str | None]) -> set[int]:
    """The indexes of ``words`` (``phrase_words``) said of another thing than the product
    (module docstring): the clause after "works with", "takes"...; the noun phrase after
    "fits", "replaces", "unlike", "instead" (of), "your", "any", "other"..."""
    marked: set[int] = set()
    to_clause_end = False
    for index, word in enumerate(words):
        if word is None:
            to_clause_end = False
        elif to_clause_end:
            marked.add(index)
        elif word in _FITS or word in _COMPARED:  # "lighter than a pick with a nylon
            marked.add(index)  # brush", "works like a fish scaler" (round 48)
            marked.update(_fitted(words, index))
        elif word in _CLAUSE_OF_ANOTHER or (
            index
            and (word == "with" or (word == "on" and words[index - 1] in _WORKS))
            and words[index - 1] in _WITH_OF_ANOTHER
        ):
            to_clause_end = True
        elif (
            word in _OBJECT_IS_ANOTHER
            or word in _ANOTHER
            or _referred(words, index)
            or (word == "for" and index + 1 < len(words) and words[index + 1] in _FOR_ANOTHER)
            or (word == "into" and index and words[index - 1] in _BECOMES)
        ):
            marked.add(index)
            marked.update(_noun_phrase(words, index + 1))
            if word == "our" and words[index - 1] in _REFERRALS:
                # and what the buyer is sent there for ("for solar garden lights see our
                # stake sets"; round 14)
                marked.update(_before(words, index - 1))
        elif word in _STANDS_IN:
            marked.update(_before(words, index))
            marked.update(_noun_phrase(words, index + 1))
        elif word in _OTHER_MODELS:
            marked.update(_named_model(words, index))
            to_clause_end = _another_model_has(words, index)
        elif word in _PEOPLE:
            marked.update(_before(words, index))
        elif word == "you" and _owned(words, index):
            marked.update(_before(words, index - (words[index - 1] in ("that", "which"))))
        elif word in _BESIDE or (word == "to" and words[index - 1] == "next"):
            marked.update(_noun_phrase(words, index + 1))
        elif word in _PLACING_VERBS and (place := _placed_on_another(words, index)):
            marked.update(_before(words, index))
            marked.update(_noun_phrase(words, place))
        elif _denied_verb(words, index):
            marked.update(_before(words, index - 1 if word == "not" else index))
        elif word == "of" and (
            (index + 1 < len(words) and words[index + 1] in _OF_ANOTHER)
            or _of_other_models(words, index)
        ):
            marked.update(_before(words, index))
            marked.update(_noun_phrase(words, index + 1))
    return marked


def _owned(words, index):
    """True when ``words[index]`` ("you") says the buyer already has the noun phrase before
    it ("beside the interlinked smoke alarms you already have"; round 18)."""
    following = index + 1
    while following < len(words) and words[following] in _OWNING_ADVERBS:
        following += 1
    return index > 0 and following < len(words) and words[following] in _OWNING


def _referred(words, index):
    """True when ``words[index]`` is "our" after a verb that sends the buyer elsewhere
    ("see our charging stand", "check out our ...")."""
    before = words[index - 1] if index else None
    return words[index] == "our" and (
        before in _REFERRALS or (before == "out" and index > 1 and words[index - 2] == "check")
    )


def _named_model(words, index):
    """The indexes of the usable words before ``words[index]`` ("model", "version"...),
    three at most, unless "this" opens them ("this whisper quiet model")."""
    start = index
    while start > 0 and index - start < 3 and usable(words[start - 1]):
        start -= 1
    if start == index or (start > 0 and words[start - 1] == "this"):
        return []
    return list(range(start, index))


def _of_other_models(words, index):
    """True when "of" at ``words[index]`` is followed, within ``_MODEL_REACH`` words of its
    clause, by "models", "versions"... ("the bullet ice of countertop models"; round 13)."""
    for ahead in words[index + 1 : index + 1 + _MODEL_REACH]:
        if ahead is None or ahead == "this":
            return False
        if ahead in _OTHER_MODELS:
            return True
    return False


def _fitted(words, index):
    """The indexes of the noun phrase after ``words[index]`` ("fits", "replaces") and of the
    one after "with", "featuring" or "having" right after it."""
    phrase = _noun_phrase(words, index + 1)
    after = (max(phrase) + 1) if phrase else index + 1
    if after < len(words) and words[after] in _HAVING_WORDS:
        having = _noun_phrase(words, after + 1)
        marked = [*phrase, after, *having]
        # ... and the ones joined to it ("shaves with blade adjusters and a flat sole")
        while having and (joined := max(having) + 1) < len(words) and words[joined] in _JOINS:
            having = _noun_phrase(words, joined + 1)
            marked += [joined, *having]
        return marked
    return phrase


def _another_model_has(words, index):
    """True when ``words[index]`` ("model", "version"...) is qualified between "the", "a"
    or "our" and itself, and a verb of having follows ("the 12 V version has ...")."""
    following = words[index + 1] if index + 1 < len(words) else None
    if following not in _HAVING:
        return False
    for back in range(index - 1, max(index - 1 - _MODEL_REACH, -1), -1):
        if words[back] is None or words[back] == "this":
            return False
        if words[back] in ("the", "a", "an", "our"):
            return back < index - 1
    return False


def _placed_on_another(words, index):
    """The index of the preposition when ``words[index]`` ("is", "comes"...) places its
    subject on another thing: at most two of "only", "found"... then "on", "in", "with"...
    and a determiner of another thing ("our", "other", "most"; not "a", "the", "its"), else
    0 ("The flick lock is only on our adult poles")."""
    place = index + 1
    while place < index + 3 and place < len(words) and words[place] in _PLACING_WORDS:
        place += 1
    if place + 1 < len(words) and words[place] in _PLACES:
        return place if words[place + 1] in _PLACE_OF_ANOTHER else 0
    return 0


def _denied_verb(words, index):
    """True when ``words[index]`` denies a verb after its subject: "not" after "is",
    "are", "does"...; "isn't", "doesn't", "can't" (split at the apostrophe); "cannot"."""
    word = words[index]
    if word == "not":
        return index > 0 and words[index - 1] in _AUXILIARIES
    following = words[index + 1] if index + 1 < len(words) else None
    return word == "cannot" or (word in _NEGATED_VERBS and following == "t")


def _before(words, index):
    """The indexes of the noun phrase of ``words`` that ends right before ``index`` (its
    usable words, back to a determiner, a function word or the clause's start; the
    particle of a compound goes on: "the tip-over switch of most heaters")."""
    found = []
    index -= 1
    while index >= 0 and usable(words[index]):
        if words[index] in FUNCTION_WORDS and words[index] not in _PARTICLES:
            break
        found.append(index)
        index -= 1
    return found


def _noun_phrase(words, start):
    """The indexes of the noun phrase of ``words`` from ``start``: the determiners and
    stop words before it, then its usable words (and "of" with what follows it: "the worn
    cushions of most foldable headphones"), to a function word or the clause's end."""
    found, index, begun = [], start, False
    while index < len(words) and words[index] is not None:
        word = words[index]
        if usable(word) and word not in FUNCTION_WORDS:
            begun = True
        elif begun and word == "of":
            begun = False  # the phrase goes on after "of"
        elif begun or not (word in DETERMINERS or word in _ANOTHER or not usable(word)):
            break
        found.append(index)
        index += 1
    return found


def modifier(word: str | None) -> bool:
    """True when ``word`` reads as a word that describes (by its ending)."""
    return word is not None and len(word) >= 4 and word.endswith(_MODIFIER_ENDINGS)


def _noun(word):
    return usable(word) and word not in DEGREE and word not in FUNCTION_WORDS


def of_a_part(
    words: Sequence[str | None],
    start: int,
    end: int,
    title_stems: AbstractSet[str],
    kinds: AbstractSet[str],
    known: AbstractSet[tuple[str, ...]],
    doing_only: bool = False,
) -> bool:
    """True when the term ``words[start:end]``, ending in a modifier, is said of another
    noun that follows it (module docstring): not a word of the title (``title_stems``),
    nor one of the category's ``kinds``, nor the start of a ``known`` two-word term
    ending in one; other modifiers between them are passed over ("an ergonomic curved
    backrest"). A following word in "-s" may be a verb ("the removable cover zips off").
    ``doing_only``: only a modifier in "-ing" counts (what the part does)."""
    if not modifier(words[end - 1]):
        return False  # a noun ("cool shot button", "lumbar support cushion")
    if doing_only and not words[end - 1].endswith("ing"):
        return False  # a state of a part, not what it does
    index = end
    while index < len(words) - 1 and modifier(words[index]) and _noun(words[index + 1]):
        index += 1
    following = words[index] if index < len(words) else None
    if not _noun(following):
        return False
    if following.endswith("s") and not following.endswith("ss"):
        return False
    head = following
    after = words[index + 1] if index + 1 < len(words) else None
    if usable(after) and (cached_stem(following), cached_stem(after)) in known:
        head = after
    return cached_stem(head) not in title_stems and cached_stem(head) not in kinds


def opening_phrase(description: str | None) -> tuple[str, ...]:
    """The stems of the noun phrase that opens ``description`` after "a" or "an" (its
    run of usable words, to the first other word or punctuation), or ``()``."""
    match = re.match(r"\s*(?:an?|this)\s+([^,.;:!?()]*)", description or "", re.IGNORECASE)
    if match is None:
        return ()
    run = []
    for token in PHRASE_TOKEN.finditer(match.group(1)):
        word = token.group().casefold()
        if not usable(word) or word in DEGREE:
            break
        run.append(cached_stem(word))
    return tuple(run)


# negations that deny what a thing is ("not", "no", "isn't"), not "without" or "than"
_DENIALS = word_set("not no nor isn aren neither")


def denies_kind(
    description: str | None,
    counts: Mapping[tuple[str, ...], int],
    kinds: AbstractSet[str],
    least: int,
) -> bool:
    """True when ``description`` says the product is not a term of its category (one of
    ``counts``, ``least`` titles or more) naming one of its ``kinds``, at most three words
    after "not", "no"...: "They are not wireless earbuds", "not an electric kettle". The
    category's terms then describe another kind of thing than the product."""
    words = phrase_words(description)
    for index, word in enumerate(words):
        if word not in _DENIALS:
            continue
        for start in range(index + 1, min(index + 4, len(words))):
            for end in range(start + 1, min(start + 3, len(words)) + 1):
                run = words[start:end]
                if not all(usable(w) for w in run):
                    break
                phrase = tuple(cached_stem(w) for w in run)
                if phrase[-1] in kinds and counts.get(phrase, 0) >= least:
                    return True
    return False


_TITLE_PARTS = re.compile(r",|\s[-\u2013|/]\s|[()]")
# after a kind, a set of it or the form it comes in, not a thing that serves it
_MANY_OR_FORM = frozenset(
    map(
        cached_stem,
        word_set("kit set bundle pack assortment collection paste cream gel powder balm"),
    )
)


def serves_a_kind(title: str | None, kind: str | None, kinds: AbstractSet[str]) -> bool:
    """True when the product is an accessory of the category's ``kinds`` (round 8): its
    own ``kind`` (``kind_of(title)``) is none of them, and its title names one before
    another noun ("Goggle Lens Case", "Mouse Pad", "Water Dispenser Pump") or after "for"
    ("Keycap Set for Any Mechanical Keyboard"). Its description speaks of the things it
    serves ("fits hot-swappable and soldered boards alike, full size or tenkeyless"), so
    the category's terms are no evidence at all; a product of the kind in other words
    ("Robot Cleaner", "Grain Cooker") is not one."""
    if not kinds or kind in kinds:
        return False
    for part in _TITLE_PARTS.split(title or ""):
        words = [m.group().casefold() for m in PHRASE_TOKEN.finditer(part)]
        for index, word in enumerate(words):
            if cached_stem(word) not in kinds:
                continue
            following = words[index + 1] if index + 1 < len(words) else None
            if following is not None and cached_stem(following) in _MANY_OR_FORM:
                continue  # "Pusher Fid Bundle", "Saddle Soap Paste" (round 48)
            if "for" in words[:index] or (
                following is not None and following.isalpha() and usable(following)
            ):
                return True
    return False


def names_a_served_kind(description: str | None, kind: str | None, kinds: AbstractSet[str]) -> bool:
    """True when the product is an accessory its title does not call one (round 9): its
    own ``kind`` is none of the category's ``kinds``, and its description names one of
    them ("Sized for a keyboard and a gaming mouse" of "Extended Desk Mat", "Powers a dash
    cam" of "Hardwire Kit", "Fits the tower air purifier" of "Replacement HEPA Cartridge"),
    though not in the noun phrase it opens with: that one says what the product is ("A
    battery projector that ..." of "Battery Beamer", "A pair of trekking poles")."""
    if not kinds or kind in kinds:
        return False
    words = phrase_words(description)
    named = [
        i
        for i, word in enumerate(words)
        if word and cached_stem(word) in kinds and not _compared_with(words, i)
    ]
    if not named:
        return False
    if _called_one(words, named[0]):
        return False
    index = _past_noun_phrase(words, 1)  # after the first clause's mark
    if index == 1 and index < len(words) and words[index] in _SUBJECTS:
        index += 1  # "It is a knock down horse" (round 50)
    if index < named[0] and words[index] in _IS:  # "The set is a mash tun with ..." (round 47)
        after = _past_noun_phrase(words, index + 1)
        if after - 1 in named:
            return False
    return index < named[0]


def _start_of_phrase(words, index):
    """The index of the first word of the noun phrase ending at ``index`` (its modifiers)."""
    while index > 0 and words[index - 1] and _noun(words[index - 1]):
        index -= 1
    return index


def _compared_with(words, index):
    """True when the kind at ``index`` is another thing the product is compared with
    ("Lighter than a pick with a nylon brush", "unlike a winder"; round 48)."""
    start = _start_of_phrase(words, index)
    if start and words[start - 1] in DETERMINERS:
        start -= 1
    return start > 0 and words[start - 1] in _COMPARED


def _called_one(words, named):
    """True when the kind at ``named`` follows "sold as a", "works as a", "converted into a"
    ...: the description says the product is one ("Sold as a porridge pan by the mill", "Works
    as a gravy ladle"; round 47), not what it serves ("fits into a mash tun")."""
    start = _start_of_phrase(words, named)  # the kind's modifiers ("a cake ring")
    if start < 3 or words[start - 1] not in ("a", "an"):
        return False
    link, before = words[start - 2], words[max(0, start - 5) : start - 2]
    if None in before:
        before = before[before.index(None) + 1 :]  # (within the clause)
    if link == "as":  # "sold to bakers as a cake ring"
        return bool(_CALLED.intersection(before))
    return link == "into" and bool(before) and before[-1] in _MADE


def _past_noun_phrase(words, index):
    """The index after the noun phrase of ``words`` from ``index``: a determiner ("a", "the",
    "this"...; round 47), then its nouns ("a pair of trekking poles")."""
    if index < len(words) and words[index] in DETERMINERS:
        index += 1
    while index < len(words) and words[index] and (_noun(words[index]) or words[index] in _SETS):
        index += 1
    return index


# "a pair of trekking poles", "a set of ...": the noun phrase goes on
_SETS = word_set("pair set of")
_IS = word_set("is are")
_SUBJECTS = word_set("it they this")
_CALLED = word_set("sold marketed works work doubles double serves serve used")
_MADE = word_set("converted turned made")
_COMPARED = word_set("than unlike like")
