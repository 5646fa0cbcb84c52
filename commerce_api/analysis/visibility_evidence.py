"""Evidence that words of our title, said of our brand, still speak of another product or of
none (``visibility_match``; round 7 of issue 30, docs/decisions.md):

- a **count** the title lacks, or another one ("<brand> Keylock Quickdraw Pack of 6" of our
  single quickdraw; "Set of 3" of our "Set of 6"): another product (``count_conflict``);
- **"without"** a word of our title ("Fly Mask without Ears" of our "Fly Mask with Ears"):
  another product (``without_our_words``);
- a **size that belongs to another item** of the unit ("... Quickdraw 12 cm, ... and the
  <brand> trifold pad"): the 12 cm is the quickdraw's, not another size of the pad
  (``visibility_claims.unclaimed``);
- a sentence that speaks of our brand only because the one before did ("<brand> sells ...
  . Their demerara syrup ...") names a product only with a **definite reference** before
  its words ("the", "their", "this"...), not when it speaks of a kind in general ("Brood-
  depth frames are too deep"; "... so you can use bottled ink") (``definite_before``);
- the brand said right before an **exact full title** of ours belongs to that product: the
  unit's other words ("... takes fountain pen ink") name no other of our products on the
  strength of that brand (``brand_taken``).
"""

from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from .listing_title import STOPWORDS, stem, word_set
from .visibility_sizes import COUNT, NUMBER_WORDS, as_given, compares, sizes_agree

_COUNTED = frozenset(["pack", "set", "box", "case", "bundle", "tin", "bag"])
# nouns that make a name before them a place's, an institution's or an event's
# ("Orchardine Farm", "the <brand> Cup")
PLACES = word_set(
    "farm club point bay beach valley road street lane lake hall castle park village "
    "town island river hill harbor station estate moor forest cove marina quay pier "
    "festival market museum observatory society school church abbey county city "
    "district council airport hotel inn pub cafe restaurant reserve woods boathouse arena "
    "stadium lodge manor heath ridge headland wharf dock gardens academy college library "
    "gallery theatre theater centre center cup trophy marathon regatta championship "
    "championships league tournament rally fair expo derby relay"
)
PLACE_REACH = 2  # words after the name a place noun may come ("<brand> Cider Club")
WITHOUT = frozenset(["without", "minus", "sans"])
WITHOUT_REACH = 3  # words after "without" that it negates
# a definite reference to a product already spoken of: a determiner or the brand's pronoun
# ("your" is not one: "your guide sheet" is the reader's own)
DEFINITE = frozenset(["the", "their", "its", "this", "that", "these", "those", "our", "my"])
PICKS = frozenset(["one", "ones", "both", "each"])  # words that pick products out of a kind
REFERENCE_REACH = 3  # words of the title a definite reference may stand before
_PRONOUNS = frozenset(["i", "you", "we", "they", "he", "she", "it", "one", "them", "us"])
# words that stand in a noun phrase without naming a product ("for your carving")
FUNCTION_WORDS = (
    DEFINITE
    | _PRONOUNS
    | frozenset(
        [
            "your",
            "any",
            "some",
            "each",
            "every",
            "own",
            "same",
            "other",
            "another",
            "such",
            "no",
            "not",
        ]
    )
)


def place_after(keys: Sequence[str], index: int, ours: Container[str]) -> bool:
    """True when ``keys[index]`` says the name before it is a place's or a club's, not our
    brand's ("<brand> Farm", "the <brand> Cider Club", "<brand> Bay"); a word of our titles
    (``ours``: "Street Deck") is no place."""
    return any(key in PLACES and key not in ours for key in keys[index : index + PLACE_REACH])


def count_conflict(said: Mapping[str, set[str]], title: Mapping[str, set[str]]) -> bool:
    """True when ``said`` gives a count (``visibility_sizes.COUNT``) the title lacks, nor
    has as a count of its words ("a pack of 10 sheets" of our "..., 10 Sheets": round 30)."""
    if COUNT not in said or COUNT in title:
        return False
    counted = {n for unit, amounts in title.items() if unit.startswith("#>") for n in amounts}
    return not said[COUNT] & counted


def count_beside(tokens: Sequence[str], start: int, end: int) -> bool:
    """True when a count ("Pack of 4", "3-pack of"; exact-title tokens) stands right before
    or after ``tokens[start:end]``: an exact title of a single product said with a count is a
    multipack we do not sell."""
    ahead, behind = list(tokens[end : end + 3]), list(tokens[max(0, start - 3) : start])
    if len(ahead) == 3 and ahead[0] in _COUNTED and ahead[1] == "of" and _number(ahead[2]):
        return True
    if len(ahead) >= 2 and _number(ahead[0]) and ahead[1] in ("pack", "pk"):
        return True
    if len(behind) == 3 and behind[0] in _COUNTED and behind[1] == "of":
        return _number(behind[2])  # "a pack of 5 <title>"
    return len(behind) == 3 and _number(behind[0]) and behind[1] in ("pack", "pk")


def _number(token):
    return token.isdigit() or token in NUMBER_WORDS


def without_our_words(keys: Sequence[str], title: Iterable[str]) -> bool:
    """True when "without" stands before a word of ``title`` (stems) in ``keys`` that the
    unit has not said before it ("... the fork drops in, without the fork fouling it"
    speaks of the fork again; round 19)."""
    title = set(title)
    for index, key in enumerate(keys):
        if key not in WITHOUT:
            continue
        said = {stem(k) for k in keys[:index]}
        after = [k for k in keys[index + 1 : index + 1 + WITHOUT_REACH] if k not in STOPWORDS]
        if any(stem(k) in title and stem(k) not in said for k in after[:2]):
            return True
    return False


def swapped_word(keys: Sequence[str], title_keys: Sequence[str], title: Iterable[str]) -> bool:
    """True when ``keys`` say our title's words with one of them swapped for a word the title
    lacks, between the same two words ("wired super frames" of our "Wired Brood Frames",
    "with iron cap" of our "with Bronze Cap"): another product of the brand, whatever the
    case it is written in."""
    title, said = set(title), [stem(key) for key in keys]
    ours = [stem(key) for key in title_keys]
    frames = {
        (ours[j - 1], ours[j + 1]): ours[j]
        for j in range(1, len(ours) - 1)
        if ours[j] in title  # a significant word between two others
    }
    for i in range(1, len(said) - 1):
        word = said[i]
        code = word.isalnum() and not word.isdigit() and len(word) >= 2  # "M7" of our "M6"
        if not (code if not word.isalpha() else len(word) >= 3):
            continue
        if word in title | STOPWORDS | FUNCTION_WORDS:
            continue
        if (said[i - 1], said[i + 1]) in frames and said[i - 1] in title | STOPWORDS | set(ours):
            return True
    return False


_MOTION_PLACES = word_set("into onto through inside under beneath against across along")


def definite_before(keys: Sequence[str], found: Iterable[str], besides: Iterable[str] = ()) -> bool:
    """True when the first run of ``found`` words (stems) in ``keys`` has a definite
    reference (``DEFINITE``) right before it, or at most ``REFERENCE_REACH`` words before
    it with only those words between ("the large cube ice tray"); of the words ``found``
    that are not ``besides`` (another product's, named in the unit), when there are some
    ("<brand>'s small soy candles; the large one": "the large"); not after a preposition
    of a place the other product goes ("into the", "onto the")."""
    found = (set(found) - set(besides)) or set(found)
    for index, key in enumerate(keys):
        if stem(key) not in found:
            continue
        for back in range(index - 1, max(-1, index - 1 - REFERENCE_REACH), -1):
            if keys[back] in DEFINITE:
                # not a place the named product goes ("... fork drops into the hardy hole";
                # round 19)
                return not (back and keys[back - 1] in _MOTION_PLACES)
            if keys[back] in STOPWORDS or keys[back] in _PRONOUNS or not keys[back].isalpha():
                return False
        return False
    return False


def kind_and_size(
    found: frozenset[str],
    kind: str | None,
    own: Mapping[str, set[str]],
    said: Mapping[str, set[str]],
    modifier: str | None = None,
) -> bool:
    """True when the unit says our brand's product by its kind alone, or the word before
    it in our title (``modifier``; round 11: "the 150 cm <brand> delta" of "Delta Kite
    150 cm"), and a size of ours ("<brand>'s 3 mm bibbed hood" of "Dive Hood with Bib -
    3 mm"); whether the size singles it out is ``_single_out_sized``'s to say. A kind that
    carries the number ("Size 02") is no kind; when that number is a size's, the kind and
    the word before it both are ("Box Kite 150 cm"; "Rock Pool Viewer 20 cm": round 13)."""
    sized = as_given(
        {amount for unit, amounts in own.items() if unit[:1] != "#" for amount in amounts}
    )
    carried = own.get(f"#{kind}", set())
    return (
        kind is not None
        and found in ({kind}, {modifier})
        and carried <= sized  # "Rock Pool Viewer 20 cm": 20 is a size, the viewer a kind
        and sizes_agree(said, own)
    )


def brand_kinds(
    keys: Sequence[str],
    brand: Sequence[str],
    kind: str | None,
    modifier: str | None = None,
    plural_title: tuple[frozenset[str], bool] | None = None,
    found: AbstractSet[str] = frozenset(),
) -> bool:
    """True when the brand is followed by its kind in the plural (the word before the kind
    in our title, ``modifier``, may come between) and nothing picks one out (``PICKS``):
    "<brand> punches cut cleanly, but the tubes go dull" speaks of the brand's punches, not
    of our "Rotary Hole Punch with Six Tubes". A title in the plural ("Bolt-On Toe Stops")
    is spoken of so only when the words found are those of the kind and its whole name (the
    title before a comma) does not follow the brand (``plural_title``: (found, that name
    follows); "<brand> toe stops last ages", not "<brand> bolt-on toe stops" nor "<brand>'s
    jin pliers" of "Jin Pliers", "<brand>'s blocking pins" of "Blocking Pins, Box of 100";
    "<brand> crooks ... hold the sways" of "Sway Crooks" is the brand's crooks: rounds 40,
    45); only there may the modifier come between ("the 17 cm <brand> keylock quickdraws"
    names our 17 cm quickdraw), or of a singular title when the words ``found`` are the
    modifier and the kind alone ("<brand> moulding sands are well graded" of our "Fine Loam
    Moulding Sand 10 kg"; round 53)."""
    width = len(brand)
    if kind is None or not width or picks_one(keys) or compares(" ".join(keys)):
        return False  # (one picked: "the shorter of the two <brand> towing ropes")
    if plural_title is not None:
        found, named = plural_title
        extra = found - {kind, modifier}
        if named or (extra and not _predicated(keys, extra)):
            return False
    elif set(found) - {kind, modifier}:
        modifier = None  # a singular title: the kind right after the brand
    for i in range(len(keys) - width):
        if list(keys[i : i + width]) != list(brand):
            continue
        after = keys[i + width : i + width + 2]
        if after and stem(after[0]) == modifier and len(after) > 1:
            after = after[1:]
        if after and after[0] != kind and stem(after[0]) == kind:
            return True
    return False


_PREDICATES = word_set("is are has have come comes get gets feel feels look looks last lasts")


def _predicated(keys: Sequence[str], words: AbstractSet[str]) -> bool:
    """True when every one of ``words`` (stems) is said only after a verb that says
    something of the kind ("<brand> beads have generous holes": "hole" describes the
    brand's beads, it picks none of them out; round 14)."""
    seen_verb = False
    for key in keys:
        seen_verb = seen_verb or key in _PREDICATES
        if stem(key) in words and not seen_verb:
            return False
    return True


def brand_leads(
    keys: Sequence[str], brand: Sequence[str], titled: Mapping[str, frozenset[str]]
) -> set[str] | None:
    """The products whose words (two or more, in a row) follow the brand where it is said,
    and those listed right after them ("<brand>, Fig & Cedarwood and Black Tea & Bergamot"),
    when every mention of the brand is so followed ("<brand>'s interval timer sticks to the
    rack, next to your speed rope": the brand is the timer's); None when a mention of the
    brand is followed by no product's words. The other products the unit names then need a
    definite reference (``definite_before``), as in a carried sentence."""
    width, led, said = len(brand), set(), False
    stems = [stem(key) for key in keys]
    for start in range(len(keys) - width + 1):
        if list(keys[start : start + width]) != list(brand):
            continue
        said, here = True, _listed_after(stems, start + width, titled)
        if not here:
            return None
        led |= here
    return led if said else None


def _listed_after(stems, index, titled):
    """The products whose words run from ``stems[index]`` on, one after another ("and"/"or"
    between them)."""
    listed = set()
    while index + 1 < len(stems):
        these = {sku for sku, found in titled.items() if {stems[index], stems[index + 1]} <= found}
        if not these:
            break
        listed |= these
        words = set().union(*(titled[sku] for sku in these))
        while index < len(stems) and stems[index] in words:
            index += 1
        if index < len(stems) and stems[index] in ("and", "or"):
            index += 1
    return listed


def picks_one(keys: Sequence[str]) -> bool:
    """True when ``keys`` pick products out of a kind (``PICKS``): "both", "each", or
    "one(s)" after a word that is not a verb of choosing ("the mesophilic one"; not "pick
    one with a strap-free design": any of them; round 18) nor a preposition ("moulded in
    one piece": a number; round 31)."""
    return any(
        key in PICKS
        and (
            key not in ("one", "ones")
            or (index and keys[index - 1] not in _CHOOSING and keys[index - 1] not in _BEFORE_ONE)
        )
        for index, key in enumerate(keys)
    )


_CHOOSING = word_set("pick choose buy get grab select order find try take need want any")
_BEFORE_ONE = word_set("in at with by")  # "in one piece", "with one hand": a number


def one_of_several(
    found: Iterable[str], holding: Mapping[str, set[str]], keys: Sequence[str]
) -> bool:
    """True when a unit saying our kind in the plural picks one product out of it: a word
    only this product's title has, and "one", "ones", "both" or "each" ("both <brand>
    cultures: the mesophilic one for cheddar ...")."""
    return picks_one(keys) and any(len(holding.get(word, ())) == 1 for word in found)


def most_words_per_kind(
    candidates: Mapping[str, tuple[frozenset[str], str | None]],
    keys: Sequence[str],
    min_found: int,
) -> dict[str, int]:
    """``{kind: the most title words a product of that kind has in the unit}`` (of
    ``candidates``: sku -> its words found and its kind) for the kinds the unit says once:
    "the trigger capo for guitars ... the spring is firm" speaks of the guitar capos, not of
    our "Spring Ukulele Capo" with fewer of its words ("the blue mug and the camping mug
    with the steel rim" names two)."""
    most: dict[str, int] = {}
    for found, kind in candidates.values():
        if len(found) >= min_found and kind is not None and kind in found:
            most[kind] = max(most.get(kind, 0), len(found))
    said = Counter(stem(key) for key in keys)
    return {kind: count for kind, count in most.items() if said[kind] == 1}


def brand_taken(
    tokens: Sequence[str],
    brand: Sequence[str],
    exact: Mapping[tuple[str, ...], list[str]],
    lengths: Iterable[int],
) -> bool:
    """True when every time ``brand`` (exact-title tokens) is said in ``tokens`` an exact
    full title of ours (``exact``: tokens -> SKUs, of the ``lengths`` given) follows it."""
    width, lengths, said = len(brand), sorted(set(lengths)), False
    if not width:
        return False
    for start in range(len(tokens) - width + 1):
        if list(tokens[start : start + width]) != list(brand):
            continue
        said = True
        after = start + width
        if not any(tuple(tokens[after : after + n]) in exact for n in lengths):
            return False
    return said


@dataclass(frozen=True)
class UnitView:
    """A unit as ``CatalogueMatcher._names_by_title`` reads it."""

    text: str  # without other brands' parts
    keys: list[str]
    sizes: dict[str, set[str]]
    names: list[set[str]]  # the names after our brand
    colours: set[str]
    numbers: set[str]
    after_brand: set[str]
    candidates: dict[str, frozenset[str]]  # sku -> its title's words in the unit
    most: dict[str, int]  # kind -> the most words of one product of it
    said: str = ""  # the unit as written


# the brand's people ("<brand>'s founder weaves on a loom") and the brand said not to make
# a product ("<brand> does not make a beater"): no product of ours is named (round 13)
_PEOPLE = word_set("founder founders owner owners staff team ceo designer designers employees")
# a place or an event of the brand, not a product: "<brand>'s new gym in Ghent has azure ring
# ropes" (round 26), unless a word of our titles
_PLACES = word_set(
    "gym gyms club clubs studio studios cafe factory warehouse office offices headquarters "
    "showroom showrooms "
    "event events festival course courses class classes academy triathlon triathlons "
    "marathon marathons race races championship championships tournament league regatta "
    # what the brand publishes: "<brand>'s care sheet says ...", "the <brand> forum" (round 29)
    "site forum forums clip clips video videos blog channel podcast newsletter guide guides "
    "tutorial tutorials sheet "
    # what the brand holds: "<brand> run coaching clinics where ..." (round 30)
    "clinic clinics camp camps workshop workshops lesson lessons session sessions "
    # an event named after the brand: "At the <brand> Waterfowl Show ...", "the <brand> Open
    # used ..." (round 35)
    "show fair fairs open contest contests competition competitions prize prizes trophy "
    "expo exhibition convention derby rally gala award awards games cup "
    # a part of the brand's shop: "Browse <brand>'s tools section at https://... for blowing
    # straws" (round 50)
    "section sections department departments aisle aisles"
)
# another maker's thing made for the brand's things: "ribbon tails that clip onto <brand> poi
# heads", "saucers that fit <brand> planters" (round 38): the brand's kind in the plural
_FITTING = word_set("fit fits fitting onto suit suits")


def _plural_after(after: Sequence[str]) -> bool:
    """True when one of the first words after the brand is a plural ("planters")."""
    return any(word != stem(word) and word.isalpha() for word in after[:2])


_HOLDING = word_set("run runs hold holds host hosts organise organises organize organizes")
_DENIALS = word_set("not doesn don t never no longer does do")
_NEGATIVE = word_set("not t never longer")  # of those, the words that deny
_MAKING = word_set("make makes made sell sells sold offer offers offered stock stocks carry")
_DENIAL_REACH = 3  # words after the brand that deny before the verb of making
# a product the brand might make ("If <brand> made a ...", "<brand> will launch a ...",
# "<brand>'s upcoming ..."): none of ours is named either
_MADE = word_set("made sold offered released launched did had")
_MODALS = word_set("will would should could might may ll")
_LAUNCHING = word_set("make launch release introduce unveil add bring sell offer")
_UNMADE = word_set(
    "upcoming prototype planned future rumoured rumored forthcoming unreleased concept"
)


def _might_make(before: str | None, after: list[str]) -> bool:
    """True when the words around a mention of the brand speak of a product it might make:
    "if" before it and "made", "sold"... after it, or a modal and a verb of launching."""
    if before == "if" and after[:1] == ["ever"]:  # "If <brand> ever make a press" (round 30)
        after = after[1:]
        if after[:1] and (after[0] in _LAUNCHING or after[0] in _MAKING):
            return True
    if before == "if" and after[:1] and after[0] in _MADE:
        return True
    return bool(after[:1]) and after[0] in _MODALS and bool(_LAUNCHING.intersection(after[1:3]))


# a product the brand made once and no longer does ("<brand> used to sell a ...", "...
# was discontinued in 2021", "no longer made", "they stopped it"; round 20): not ours
_GONE = word_set("discontinued withdrawn")
_NO_LONGER = word_set("made sold offered produced available stocked makes sells offers")
_PAST_MAKING = word_set("sell make offer stock carry produce")
_STOPPED = word_set("making selling it them production")


_NOT_YET = word_set("not t never")
_ONE = word_set("one")


def past_product(keys: Sequence[str]) -> bool:
    """True when ``keys`` say a product was made once and no longer is (the comment
    above), or is not made at all ("they do not make one yet")."""
    for index, key in enumerate(keys):
        following = keys[index + 1] if index + 1 < len(keys) else None
        after_that = keys[index + 2] if index + 2 < len(keys) else None
        if key in _GONE or (key == "phased" and following == "out"):
            return True
        if key == "no" and following == "longer" and after_that in _NO_LONGER:
            return True
        if key == "used" and following == "to" and after_that in _PAST_MAKING:
            return True
        if key == "once" and following in _MADE:
            return True
        if key in ("stopped", "dropped") and (following in _STOPPED or following == "from"):
            return True
        if key in _NOT_YET and following in _MAKING and after_that in _ONE:
            return True  # "a <brand> kit would be lovely, but they do not make one" (round 30)
    return False


_EARLIER = frozenset(
    ["first", "earliest", "earlier", "original", "previous", "older", "old", "former"]
)


def earlier_model(keys: Sequence[str], brand: Sequence[str]) -> bool:
    """True when the brand's earlier model is spoken of: "<brand>'s first blowstick", "<brand>'s
    earlier frame", "the old <brand> stand" (round 44); not "my first <brand> stand"."""
    width = len(brand)
    for start in range(len(keys) - width + 1):
        if list(keys[start : start + width]) != list(brand):
            continue
        after = keys[start + width] if start + width < len(keys) else None
        before = keys[max(0, start - 2) : start]
        if after in _EARLIER or (len(before) == 2 and before[0] == "the" and before[1] in _EARLIER):
            return True
    return False


def name_after_brand(keys: Sequence[str], brand: Sequence[str], name: AbstractSet[str]) -> bool:
    """True when the words right after the brand are ``name``'s (stems), in any order."""
    width, size = len(brand), len(name)
    return any(
        list(keys[i : i + width]) == list(brand)
        and {stem(key) for key in keys[i + width : i + width + size]} == name
        for i in range(len(keys) - width - size + 1)
    )


# another firm set apart from the brand (round 54)
_SET_APART = (["confused", "with"], ["unrelated", "to"], ["confuse", "with"])
# the domains after a host's name: "<brand>.example/tools" (round 50)
_HOSTS = word_set("com net org co uk de fr nl eu io shop store example online")


def brand_aside(keys: Sequence[str], brand: Sequence[str], ours: Container[str] = ()) -> bool:
    """True when every mention of the ``brand`` in ``keys`` is followed by one of its
    people or places, by a denial that it makes or sells something, or speaks of a product it
    might make (the comments above); a mention as an address's host is not counted."""
    width, mentions = len(brand), 0
    for start in range(len(keys) - width + 1):
        if list(keys[start : start + width]) != list(brand):
            continue
        after = list(keys[start + width : start + width + _DENIAL_REACH + 1])
        if after[:1] and after[0] in _HOSTS:
            continue  # an address's host, not said of the brand (round 50)
        mentions += 1
        if keys[max(0, start - 2) : start] in _SET_APART or keys[start - 1 : start] == ["not"]:
            continue  # "not to be confused with <brand>", "<Other>, not <brand>, sells ..."
        if after[:1] and (after[0] in _PEOPLE or after[0] in _UNMADE):
            continue
        reach = 4 if after[:1] and after[0] in _HOLDING else 2  # "<brand> run coaching clinics"
        if any(word in _PLACES and stem(word) not in ours for word in after[:reach]):
            continue  # "<brand>'s new gym ..." (``ours``: the stems of our title words)
        if _might_make(keys[start - 1] if start else None, after):
            continue
        if start and keys[start - 1] in _FITTING and _plural_after(after):
            continue  # "saucers that fit <brand> planters" (round 38)
        denial = 0
        while denial < len(after) and (
            after[denial] in _DENIALS or after[denial] in ("does", "do")
        ):
            denial += 1
        if not (
            0 < denial < len(after) and after[denial] in _MAKING and _DENIALS & set(after[:denial])
        ):
            return False
    return mentions > 0
