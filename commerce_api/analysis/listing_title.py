"""Title checks and the proposed title of ``listing_optimize``.

A title is read as whitespace-separated tokens; a token's *key* is its letters and digits,
case-folded ("Mug," and "MUG" are the same word). The checks and the clean-up use the same
tokens and keys, so whatever a check flags the clean-up can remove, and the proposed title
is re-checked until it raises no title issue (or none can be built from the product's own
words: then it is None, never a made-up title).
"""

import re
import unicodedata
from collections.abc import Iterable

from .listing_profiles import ListingProfile

# Words and phrases marketplaces forbid in titles as promotional (as keys, case-folded).
PROMOTIONAL_PHRASES = tuple(
    tuple(phrase.split())
    for phrase in (
        "free shipping",
        "free delivery",
        "free gift",
        "sale",
        "on sale",
        "hot sale",
        "best seller",
        "bestseller",
        "best selling",
        "top seller",
        "top rated",
        "best price",
        "lowest price",
        "cheapest",
        "cheap",
        "discount",
        "discounted",
        "deal",
        "deals",
        "clearance",
        "limited time",
        "limited offer",
        "special offer",
        "buy now",
        "order now",
        "hurry",
        "new arrival",
        "guaranteed",
        "guarantee",
        "promo",
        "promotion",
        "bonus",
        "amazing",
        "awesome",
        "wow",
        "number one",
        "must have",
        "bargain",
    )
)
PROMOTIONAL_WORDS = frozenset(p[0] for p in PROMOTIONAL_PHRASES if len(p) == 1)
_PHRASES_BY_FIRST_WORD = {}
for _phrase in PROMOTIONAL_PHRASES:
    _PHRASES_BY_FIRST_WORD.setdefault(_phrase[0], []).append(_phrase)
# Decoration: "!", currency signs (Sc) and other symbols (So: emoji, stars, (R), (TM)).
_DECORATION_CATEGORIES = ("Sc", "So")


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Upper-case words that are not shouting (acronyms and sizes).
ACRONYMS = word_set(
    "usb usbc led lcd oled qled hdmi wifi gps dvd uv ac dc xs xl xxl xxxl rgb usa uk eu bpa "
    "diy pvc abs tv hd uhd fhd nfc ssd hdd ram cpu gpu aaa aa ipx ce fda iso ansi din a4 a5 "
    "a6 a3 mm cm kg ml"
)
SHOUT_MIN_LETTERS = 4  # a token of at least this many capitals and no lower case shouts
SHOUT_MIN_TITLE_LETTERS = 6  # a title with this many capitals and no lower case shouts
REPEAT_MIN_KEY = 3  # shorter words (ml, x, 2) may repeat

# Small words that may repeat and are never keywords.
STOPWORDS = word_set(
    "a an and or the of for with in on at to by from x per set pack pcs piece pieces "
    "und mit für de la le les et du des"
)


def is_decoration(char: str) -> bool:
    return char == "!" or unicodedata.category(char) in _DECORATION_CATEGORIES


def key(token: str) -> str:
    """The word a token stands for: its letters and digits, case-folded."""
    if token.isalnum():  # the common case, without a pass per character
        return token.casefold()
    return "".join(c for c in token if c.isalnum()).casefold()


def has_letter(text: str) -> bool:
    return any(c.isalpha() for c in text)


# British spellings and their American ones (a word's plural follows it)
_UK_US = dict(
    pair.split(":")
    for pair in re.split(
        r"\s+",
        """
        colour:color grey:gray centre:center metre:meter litre:liter fibre:fiber theatre:theater
        aluminium:aluminum mould:mold moulded:molded moulding:molding jewellery:jewelry tyre:tire
        cosy:cozy catalogue:catalog favourite:favorite flavour:flavor harbour:harbor armour:armor
        odour:odor vapour:vapor mitre:miter calibre:caliber lustre:luster sulphur:sulfur
        plough:plow draught:draft pyjama:pajama programme:program travelling:traveling
        traveller:traveler woollen:woolen defence:defense licence:license enamelled:enameled
        labelled:labeled cancelling:canceling modelling:modeling levelling:leveling fuelled:fueled
        coloured:colored colourful:colorful honour:honor neighbour:neighbor sabre:saber
        spectre:specter manoeuvre:maneuver aeroplane:airplane
        """.strip(),
    )
)
_ISE_ENDINGS = (("isation", "ization"), ("ised", "ized"), ("iser", "izer"), ("ising", "izing"))
_NOT_ISE = frozenset(["raised", "praised", "poised", "revised", "advised", "supervised"])


def fold_spelling(key: str) -> str:
    """A lower-case word in American spelling ("colour" is "color", "moulds" is "molds",
    "anodised" is "anodized"), so a title and an answer in the other spelling agree."""
    if key in _UK_US:
        return _UK_US[key]
    if key.endswith("s") and key[:-1] in _UK_US:
        return _UK_US[key[:-1]] + "s"
    for ending, american in _ISE_ENDINGS:
        if key.endswith(ending) and len(key) - len(ending) >= 3 and key not in _NOT_ISE:
            return key[: -len(ending)] + american
    return key


_ES_PLURAL_AFTER = ("s", "x", "z", "ch", "sh")  # "es" is a plural ending after these


def stem(word: str) -> str:
    """Light plural folding ("mugs" and "mug", "boxes" and "box", "candles" and "candle"
    are one word)."""
    if len(word) > 4 and word.endswith("es") and word[:-2].endswith(_ES_PLURAL_AFTER):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


# Checks --------------------------------------------------------------------------------


def _promotional_spans(tokens):
    """``[(start, end, phrase)]`` token spans of promotional words and phrases."""
    keys = [key(t) for t in tokens]
    spans = []
    for i, token in enumerate(tokens):
        if "#1" in token.replace(" ", ""):
            spans.append((i, i + 1, "#1"))
        if i + 1 < len(tokens) and token.endswith("%") and keys[i + 1] == "off":
            spans.append((i, i + 2, f"{token} off"))
        for phrase in _PHRASES_BY_FIRST_WORD.get(keys[i], ()):
            if tuple(keys[i : i + len(phrase)]) == phrase:
                spans.append((i, i + len(phrase), " ".join(phrase)))
    return spans


def _shouting(token):
    if key(token) in ACRONYMS:
        return False
    upper = sum(c.isupper() for c in token)
    lower = sum(c.islower() for c in token)
    return upper >= SHOUT_MIN_LETTERS and lower == 0


def _title_shouts(tokens):
    words = [t for t in tokens if key(t) not in ACRONYMS]
    upper = sum(c.isupper() for t in words for c in t)
    lower = sum(c.islower() for t in words for c in t)
    return upper >= SHOUT_MIN_TITLE_LETTERS and lower == 0


def _repeats(tokens, max_repeats):
    """Indexes of tokens that repeat a word: straight after itself, or beyond max_repeats."""
    seen = {}
    previous = None
    flagged = []
    for i, token in enumerate(tokens):
        word = key(token)
        if not word or not has_letter(word) or word in STOPWORDS:
            previous = word or previous
            continue
        seen[word] = seen.get(word, 0) + 1
        if word == previous or (len(word) >= REPEAT_MIN_KEY and seen[word] > max_repeats):
            flagged.append(i)
        previous = word
    return flagged


def title_issues(title: str | None, profile: ListingProfile) -> list[tuple[str, str]]:
    """The title issues ``[(code, message)]`` of ``title`` under ``profile``."""
    title = title or ""
    tokens = title.split()
    issues = []
    length = len(title.strip())
    if length < profile.title_min:
        issues.append(
            (
                "TITLE_TOO_SHORT",
                f"The title has {length} characters; {profile.name} listings do better with "
                f"at least {profile.title_min} (product type, brand, key attributes).",
            )
        )
    if length > profile.title_max:
        issues.append(
            (
                "TITLE_TOO_LONG",
                f"The title has {length} characters; {profile.name} allows at most "
                f"{profile.title_max}.",
            )
        )
    if _title_shouts(tokens) or any(_shouting(t) for t in tokens):
        issues.append(("TITLE_ALL_CAPS", "Write the title in normal case, not in capitals."))
    promotional = sorted({phrase for _, _, phrase in _promotional_spans(tokens)})
    decorations = sorted({c for c in title if is_decoration(c)})
    if promotional or decorations:
        found = ", ".join([*(f'"{p}"' for p in promotional), *decorations])
        issues.append(
            (
                "TITLE_PROMOTIONAL",
                f"Promotional words or symbols do not belong in a title: {found}.",
            )
        )
    repeated = _repeats(tokens, profile.max_word_repeats)
    if repeated:
        words = sorted({key(tokens[i]) for i in repeated})
        issues.append(
            (
                "TITLE_REPEATED_WORD",
                f"Repeated words: {', '.join(words)} (at most {profile.max_word_repeats} "
                f"times each on {profile.name}, never twice in a row).",
            )
        )
    return issues


# Proposed title -------------------------------------------------------------------------

MAX_PASSES = 8
_PUNCTUATION = ".,;:!?()[]{}\"'"
_CONNECTORS = word_set("and or with for of in on at to by from x & + - | / ,")


def _strip_promotional(tokens, changes):
    spans = _promotional_spans(tokens)
    drop = {i for start, end, _ in spans for i in range(start, end)}
    if drop:
        changes.add("removed promotional words")
    out = []
    for i, token in enumerate(tokens):
        if i in drop:
            continue
        cleaned = "".join(
            c for c in token if not is_decoration(c) and unicodedata.category(c)[0] != "C"
        )
        if cleaned != token:
            changes.add("removed symbols")
        if cleaned and (key(cleaned) or cleaned in _CONNECTORS):
            out.append(cleaned)
    return out


def unpromoted_tokens(text: str | None) -> list[str]:
    """The tokens of ``text`` outside promotional words and phrases (symbols kept: cheaper
    than ``strip_promotional`` where only the words count)."""
    tokens = (text or "").split()
    drop = {i for start, end, _ in _promotional_spans(tokens) for i in range(start, end)}
    return [token for i, token in enumerate(tokens) if i not in drop]


def strip_promotional(text: str | None) -> str:
    """``text`` without promotional words, phrases and symbols."""
    return " ".join(_strip_promotional((text or "").split(), set()))


def _normal_case(token):
    """ "ENAMEL" -> "Enamel", "750ML" -> "750ml"; None when it cannot be lower case."""
    lowered = token.lower()
    for i, char in enumerate(lowered):
        if char.isalpha():
            lowered = lowered[:i] + char.upper() + lowered[i + 1 :]
            break
        if char.isdigit():
            break
    return None if _shouting(lowered) else lowered


def _fix_case(tokens, loud, changes):
    """Write shouting words in normal case; in a title that shouted (``loud``), its other
    capitalised words of three letters or more (not acronyms) are normalised too."""
    whole = _title_shouts(tokens)
    out = []
    for token in tokens:
        capitals = not any(c.islower() for c in token) and key(token) not in ACRONYMS
        letters = sum(c.isupper() for c in token)
        shouts = _shouting(token) or (capitals and (whole or (loud and letters >= 3)))
        if not shouts:
            out.append(token)
            continue
        fixed = _normal_case(token)
        if fixed != token:
            changes.add("changed capitals to normal case")
        if fixed is not None and has_letter(fixed) == has_letter(token):
            out.append(fixed)
    if _title_shouts(out):  # letters without a lower case: drop them
        out = [t for t in out if key(t) in ACRONYMS or not any(c.isupper() for c in t)]
    return out


def _drop_repeats(tokens, max_repeats, changes):
    drop = set(_repeats(tokens, max_repeats))
    if drop:
        changes.add("removed repeated words")
    return [t for i, t in enumerate(tokens) if i not in drop]


def _trim_connectors(tokens):
    while tokens and (key(tokens[-1]) in _CONNECTORS or not key(tokens[-1])):
        tokens = tokens[:-1]
    if tokens:
        tokens[-1] = tokens[-1].rstrip(",;:-|/&+")
    while tokens and not key(tokens[0]):
        tokens = tokens[1:]
    return [t for t in tokens if t]


def _shorten(tokens, limit, changes):
    if len(" ".join(tokens)) <= limit:
        return tokens
    changes.add(f"shortened to at most {limit} characters")
    while len(tokens) > 1 and len(" ".join(tokens)) > limit:
        tokens = _trim_connectors(tokens[:-1])
    if tokens and len(tokens[0]) > limit:
        tokens = [tokens[0][:limit]]
    return tokens


_LENGTH_CODES = ("TITLE_TOO_SHORT", "TITLE_TOO_LONG")


def _lengthen(tokens, padding, profile, changes):
    """Append padding phrases (short phrases of the product's description, then its single
    words) with the words not yet in the title, until it reaches the profile's minimum; a
    phrase that would raise a title issue of its own (promotional, capitals, repeats, too
    long) is skipped."""
    present = {key(t) for t in tokens}
    added = []
    for phrase, set_off in padding:
        if len(" ".join(tokens)) >= profile.title_min:
            break
        words = [w for w in phrase if key(w) and key(w) not in present]
        while words and (key(words[0]) in STOPWORDS or key(words[0]) in _CONNECTORS):
            words = words[1:]
        while words and (key(words[-1]) in STOPWORDS or key(words[-1]) in _CONNECTORS):
            words = words[:-1]
        if not words:
            continue
        # a phrase of the description is set off by a comma; a single word just follows
        head = [*tokens[:-1], tokens[-1].rstrip(",") + ","] if tokens and set_off else tokens
        candidate = [*head, *words]
        text = " ".join(candidate)
        if len(text) > profile.title_max:
            continue
        if any(code not in _LENGTH_CODES for code, _ in title_issues(text, profile)):
            continue
        tokens = candidate
        present.update(key(w) for w in words)
        added.append(" ".join(words))
    if added:
        changes.add("added descriptive words: " + ", ".join(added))
    return tokens


_SEGMENT_END = re.compile(r"[.,;:()\[\]!?]+")
MAX_PHRASE_WORDS = 4  # longer stretches of a description are sentences, not attributes


def padding_phrases(texts: Iterable[str | None]) -> list[tuple[list[str], bool]]:
    """``[(words, set_off)]`` a title may gain from ``texts``: each text's short comma- or
    sentence-separated phrases (set off by a comma), then each of its words on its own."""
    phrases, words = [], []
    for text in texts:
        for segment in _SEGMENT_END.split(text or ""):
            tokens = [_padding_word(w) for w in segment.split()]
            tokens = [w for w in tokens if w]
            if 0 < len(tokens) <= MAX_PHRASE_WORDS:
                phrases.append((tokens, True))
            words.extend(([w], False) for w in tokens)
    return phrases + words


def _padding_word(word):
    word = word.strip(_PUNCTUATION)
    return word if key(word) in ACRONYMS else word.lower()


def propose_title(
    title: str | None, profile: ListingProfile, padding: Iterable[str | None] = ()
) -> tuple[str | None, list[str]]:
    """``(proposed_title or None, [changes])``: the title cleaned of capitals, promotional
    words, repeats, and brought within the profile's length, using ``padding`` (texts whose
    phrases and words may be added, in order) when too short."""
    tokens = (title or "").split()
    padding = padding_phrases(padding)
    changes = set()
    loud = _title_shouts(tokens) or any(_shouting(t) for t in tokens)
    for _ in range(MAX_PASSES):
        tokens = _strip_promotional(tokens, changes)
        tokens = _fix_case(tokens, loud, changes)
        tokens = _drop_repeats(tokens, profile.max_word_repeats, changes)
        tokens = _trim_connectors(tokens)
        tokens = _lengthen(tokens, padding, profile, changes)
        tokens = _shorten(tokens, profile.title_max, changes)
        proposed = " ".join(tokens)
        if not title_issues(proposed, profile):
            return proposed, sorted(changes)
    return None, sorted(changes)
