"""The commerce wording added to VADER: a lexicon, phrases turned into single tokens (with
the index that says which phrase rules a text may trigger), and the aspect keyword lists.

Used by ``sentiment.py``; tuned on nothing but commerce usage (see docs/decisions.md).
"""

import re

ASPECTS = ("shipping", "quality", "size_fit", "value", "packaging", "service", "description")

# Words ------------------------------------------------------------------------------------

COMMERCE_LEXICON = {
    # build and quality
    "sturdy": 1.8,
    "sturdier": 1.6,
    "durable": 1.9,
    "well-made": 2.0,
    "well-built": 2.0,
    "solid": 1.2,
    "reliable": 1.6,
    "unreliable": -1.8,
    "pristine": 1.8,
    "flimsy": -1.9,
    "flimsier": -1.9,
    "shoddy": -2.1,
    "cheaply": -1.4,
    "defective": -2.2,
    "faulty": -2.0,
    "malfunctioned": -2.0,
    "malfunctions": -1.8,
    "unusable": -2.3,
    "wobbly": -1.4,
    "rickety": -1.6,
    "leaks": -1.6,
    "leaking": -1.6,
    "leaky": -1.6,
    "cracked": -1.6,
    "cracks": -1.4,
    "chipped": -1.5,
    "chipping": -1.5,
    "dented": -1.5,
    "scratched": -1.4,
    "ripped": -1.5,
    "frayed": -1.3,
    "rusty": -1.6,
    "rusts": -1.6,
    "rusting": -1.6,
    "shrank": -1.5,
    "shrunk": -1.5,
    "tore": -1.5,
    "itching": -1.1,
    "rusted": -1.6,
    "peeling": -1.3,
    "pilling": -1.2,
    "faded": -1.0,
    "stained": -1.4,
    "smelly": -1.6,
    "flaw": -1.2,
    "flaws": -1.2,
    "flawed": -1.5,
    "junk": -2.4,
    "garbage": -2.5,
    "trash": -2.2,
    "counterfeit": -2.3,
    "knockoff": -1.8,
    "knock-off": -1.8,
    "fake": -1.8,
    "mediocre": -1.2,
    "decent": 1.0,
    "comfy": 1.8,
    "absorbent": 1.3,
    "leakproof": 1.5,
    "cozy": 1.8,
    "cosy": 1.8,
    # value and service
    "overpriced": -1.9,
    "pricey": -0.8,
    "bargain": 1.6,
    "unhelpful": -1.8,
    "unresponsive": -1.8,
    "refund": -0.6,
    # lukewarm in a product review
    "ok": 0.5,
    "okay": 0.5,
    "fine": 0.6,
}

# Phrases become one token (a lexicon word) before scoring. Order matters: the first
# pattern that matches a stretch of text takes it ("didn't stop working" must become
# "didn't stopworking" before "didn't work" could take "didn't ... work").
PHRASES = (
    (
        (
            r"stop(?:s|ped|ping)? (?:working|charging|turning on)|quit working|"
            r"died after"
        ),
        "stopworking",
        -2.3,
    ),
    (
        r"works? (?:great|perfectly|well|like a charm|as expected|as advertised|as described)",
        "worksgreat",
        2.0,
    ),
    (r"fell apart|falls apart|falling apart|came apart|comes apart", "fellapart", -2.3),
    (
        r"(?:arrived|came|showed up|was delivered) "
        r"(?:broken|damaged|cracked|smashed|shattered|dented|crushed)",
        "arriveddamaged",
        -2.3,
    ),
    (
        (
            r"never (?:arrived|came|showed up|received it|got it)|"
            r"(?:didn't|did not) (?:arrive|receive it|get it)"
        ),
        "neverarrived",
        -2.5,
    ),
    (
        r"(?:arrived|came|delivered) "
        r"(?:early|quickly|promptly|on time|ahead of schedule|next day|the next day)",
        "arrivedontime",
        1.6,
    ),
    (
        (
            r"(?:arrived|came|was delivered) late|"
            r"(?:late|delayed) (?:delivery|shipment|shipping)"
        ),
        "arrivedlate",
        -1.7,
    ),
    (
        r"(?:fast|quick|speedy|prompt|rapid|super "
        r"fast|lightning fast) (?:shipping|delivery|dispatch|postage)",
        "fastshipping",
        2.0,
    ),
    (
        (
            r"(?:slow|terrible|awful) (?:shipping|delivery|dispatch|postage)|"
            r"(?:shipping|delivery) (?:was|is) (?:very |so |really )?slow|"
            r"took (?:forever|ages|weeks)"
        ),
        "slowshipping",
        -1.8,
    ),
    (
        (
            r"cheap plastic|cheaply made|feels cheap|looks cheap|cheap quality|"
            r"cheap material|cheap feeling"
        ),
        "cheapplastic",
        -2.0,
    ),
    (r"poorly made|badly made|poor build|poor craftsmanship", "poorlymade", -2.1),
    (
        (
            r"well (?:made|built|constructed|designed)|high quality|great quality|"
            r"excellent quality|good quality"
        ),
        "wellmade",
        2.1,
    ),
    (r"(?:well|nicely|carefully|securely) (?:packaged|packed|wrapped|boxed)", "wellpacked", 1.8),
    (r"(?:badly|poorly) (?:packaged|packed|wrapped)", "badlypacked", -1.8),
    (
        r"(?:exactly |just )?as (?:described|advertised|pictured|shown|expected|listed)",
        "asdescribed",
        1.6,
    ),
    (
        r"(?:looks |look |is |was )?nothing like (?:the |in the "
        r")?(?:picture|pictures|photo|photos|description|listing|image|images)",
        "nothinglikephoto",
        -2.2,
    ),
    (
        (
            r"true to size|fits? (?:perfectly|great|well|like a glove|nicely)|"
            r"perfect fit|great fit|good fit"
        ),
        "fitswell",
        2.0,
    ),
    (
        (
            r"runs? (?:small|large|big|narrow|tight)|"
            r"too (?:small|big|large|tight|short|long|loose|narrow|wide)"
        ),
        "toosmall",
        -1.5,
    ),
    (
        (
            r"(?:great|good|excellent|amazing|fantastic) value|"
            r"value for (?:the )?money|worth every (?:penny|cent)|"
            r"worth the (?:money|price)|bang for (?:the|your) buck"
        ),
        "goodvalue",
        2.1,
    ),
    (r"waste of (?:money|time)|rip-?off", "wasteofmoney", -2.6),
    (
        (
            r"(?:does|did)n't work|(?:does|did) not work|not working|"
            r"won't (?:turn on|charge|work)|doesn't turn on|dead on arrival"
        ),
        "doesnotwork",
        -2.3,
    ),
    (r"does the job|does what it says|serves its purpose", "doesthejob", 0.9),
    (r"holds up (?:well|great|nicely)|held up (?:well|great|nicely)", "holdsup", 1.7),
    (
        (
            r"(?:missing|no) (?:parts|pieces|screws|instructions|accessories)|"
            r"(?:parts|pieces) (?:were |are )?missing"
        ),
        "missingparts",
        -1.8,
    ),
    (r"wrong (?:item|size|colou?r|model|product)", "wrongitem", -1.8),
    (
        (
            r"(?:returning|returned|return|sending|sent|send) it back|"
            r"(?:returning|returned) it|had to return"
        ),
        "returnedit",
        -1.8,
    ),
    (
        (
            r"(?:chemical|strong|weird|bad|plastic) smell|"
            r"smells (?:like|of) (?:chemicals|plastic)"
        ),
        "badsmell",
        -1.5,
    ),
    (r"(?:1|one) star", "onestar", -2.2),
    (r"(?:5|five) stars", "fivestars", 2.2),
    (
        (
            r"(?:would|will) buy again|buy it again|(?:would|will) order again|"
            r"(?:would|will) purchase again"
        ),
        "buyagain",
        2.0,
    ),
)
PHRASE_LEXICON = {token: valence for _, token, valence in PHRASES}

# Sarcasm (see sentiment.py): praise words that sarcasm turns around, the words and
# phrases that name a concrete product failure, the phrases that mark sarcasm outright,
# and the words that make praise beside a complaint an honest "mixed" review instead.
SARCASM_PRAISE = frozenset(
    [
        "great",
        "fantastic",
        "brilliant",
        "wonderful",
        "awesome",
        "perfect",
        "amazing",
        "lovely",
        "nice",
        "excellent",
        "superb",
        "love",
        "loved",
        "loving",
        "wow",
        "impressed",
        "thanks",
        "thank",
        "happy",
    ]
)
FAILURE_WORDS = frozenset(
    [word for word, valence in COMMERCE_LEXICON.items() if valence <= -1.0]
    + [token for token, valence in PHRASE_LEXICON.items() if valence <= -1.5]
    + ["broke", "broken", "leak", "leaked", "wrong", "torn", "itchy"]
)
SARCASM_MARKERS = re.compile(
    r"\b(?:yeah,? right|said no one ever|thanks for nothing|"
    r"oh,? (?:great|sure|wonderful|joy|fantastic|brilliant|perfect|lovely)|"
    r"(?:great|wonderful|fantastic|brilliant|perfect|awesome),? (?:yet )?another)\b"
)
CONTRAST_WORDS = frozenset(
    [
        "but",
        "though",
        "although",
        "however",
        "except",
        "otherwise",
        "still",
        "yet",
        "apart",
        "besides",
    ]
)


# Which phrase rules a text may trigger: every match of a rule contains a word starting with
# one of the rule's keys (the first four letters of a word every match of a branch must
# hold, else of each option of a group it must go through), so a text none of whose words
# starts with a key skips that rule's regex. Common words make poor keys.
_COMMON = frozenset(
    ["the", "and", "was", "are", "for", "you", "your", "not", "its", "were", "has", "had"]
    + ["did", "does", "one", "very", "really", "super", "just", "exactly", "great", "good"]
)


def _split_top(pattern):
    """The top-level alternatives of a pattern."""
    parts, depth, current, i = [], 0, "", 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            current += pattern[i : i + 2]
            i += 2
            continue
        depth += char == "("
        depth -= char == ")"
        if char == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
        i += 1
    return [*parts, current]


def _items(branch):
    """``[(kind, value, optional)]``: letters and other characters, and groups."""
    items, i = [], 0
    while i < len(branch):
        char = branch[i]
        if char == "(":
            depth, j = 1, i + 1
            while depth:
                depth += branch[j] == "("
                depth -= branch[j] == ")"
                j += 1
            inner = branch[i + 1 : j - 1]
            inner = inner[2:] if inner.startswith("?:") else inner
            items.append(["group", inner, False])
            i = j
        elif char == "\\":
            items.append(["other", branch[i : i + 2], False])
            i += 2
        elif char in "?*":
            items[-1][2] = True
            i += 1
        elif char == "+":
            i += 1
        else:
            items.append(["letter" if char.isalpha() else "other", char, False])
            i += 1
    return items


def _branch_keys(branch):
    """Keys one of which any match of ``branch`` must hold at a word start, or None."""
    items = _items(branch)
    words, word, at_start = [], "", True
    for kind, value, optional in items:
        if kind == "letter" and not optional and (word or at_start):
            word += value
            continue
        if word:
            words.append(word)
        word = ""
        at_start = kind == "other" and value in (" ", "-")
    if word:
        words.append(word)
    usable = [w for w in words if len(w) >= 3 and w not in _COMMON]
    if usable:
        return {max(usable, key=len)[:4]}
    at_start = True
    for kind, value, optional in items:
        if kind == "group" and not optional and at_start:
            keys = set()
            for option in _split_top(value):
                found = _branch_keys(option)
                if found is None:
                    break
                keys |= found
            else:
                return keys
        at_start = kind == "other" and value in (" ", "-")
    return None


def _keys(pattern):
    keys = set()
    for branch in _split_top(pattern):
        found = _branch_keys(branch)
        if found is None:  # no sure key: every literal of the branch is one
            found = {f[:4] for f in re.findall(r"[a-z]{3,}", branch)}
        keys |= found
    return keys


PHRASE_RULES = tuple(
    (re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE), token) for pattern, token, _ in PHRASES
)
PHRASE_INDEX = {}  # key -> indexes of the rules it may trigger
for _index, (_pattern, _, _) in enumerate(PHRASES):
    for _key in _keys(_pattern):
        PHRASE_INDEX.setdefault(_key, set()).add(_index)
WORD_RE = re.compile(r"[a-z]+")

# Aspects are tagged from the words of a sentence (after the phrase pass, so phrase tokens
# count too) and from a few two-word terms.
ASPECT_WORDS = {
    "shipping": "shipping shipped ships ship delivery delivered deliver arrive arrived arrival "
    "courier dispatch dispatched postage tracking fastshipping slowshipping arrivedontime "
    "arrivedlate neverarrived arriveddamaged",
    "quality": "quality sturdy sturdier durable durability flimsy flimsier solid shoddy broke "
    "broken break breaks cracked cracks crack chipped chipping material materials build built "
    "stitching seam seams plastic defective faulty cheaply wellmade poorlymade cheapplastic "
    "stopworking fellapart doesnotwork worksgreat holdsup leak leaks leaking leaky rusty rusted "
    "wobbly peeling pilling well-made well-built lasts lasted flimsiness craftsmanship "
    "malfunctioned unusable junk",
    "size_fit": "size sizes sized sizing fit fits fitted fitting tight loose snug fitswell "
    "toosmall smaller larger bigger length width dimensions",
    "value": "price prices priced pricey pricing value worth money expensive cheap cheaper "
    "bargain overpriced cost deal goodvalue wasteofmoney penny",
    "packaging": "package packaged packaging packed packing box boxed boxes wrapped wrapping "
    "parcel envelope wellpacked badlypacked crushed",
    "service": "seller service support refund refunded replacement responded replied reply "
    "response responsive unresponsive unhelpful helpful contacted communication",
    "description": "described description picture pictures pictured photo photos image images "
    "listing advertised color colour asdescribed nothinglikephoto misleading "
    "wrongitem counterfeit fake knockoff knock-off",
}
ASPECT_BIGRAMS = {
    "customer service": "service",
    "bubble wrap": "packaging",
    "as shown": "description",
    "days early": "shipping",
    "days late": "shipping",
}
BIGRAM_ENDS = frozenset(bigram.split()[1] for bigram in ASPECT_BIGRAMS)
WORD_ASPECTS = {}
for _aspect, _words in ASPECT_WORDS.items():
    for _word in _words.split():
        WORD_ASPECTS.setdefault(_word, set()).add(_aspect)
