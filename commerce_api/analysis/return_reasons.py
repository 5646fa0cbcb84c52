"""Return reasons to categories: the marketplace's reason code first, then weighted keyword
rules over the buyer's ``reason_text``; each return gets a category and a confidence."""

import math
import re

CATEGORIES = (
    "defective",
    "damaged_in_transit",
    "not_as_described",
    "wrong_item",
    "size_fit",
    "missing_parts",
    "changed_mind",
    "late_delivery",
    "better_price",
    "other",
)

STRONG_CODE = 0.95  # a specific code ("damaged_by_carrier") is the marketplace's own answer
WEAK_CODE = 0.7  # a vague code ("damaged", "quality") may be corrected by the text
UNKNOWN_CONFIDENCE = 0.2  # nothing recognised: "other"

# Reason codes as marketplaces spell them (Amazon's, eBay's, Zalando's, ours), normalised to
# lower case with "_" between words.
_STRONG = {
    "defective": "defective defective_item item_defective not_working doesnt_work does_not_work "
    "faulty malfunction stopped_working item_broken dead_on_arrival doa",
    "damaged_in_transit": "damaged_by_carrier damaged_in_transit damaged_in_shipping "
    "damaged_during_shipping arrived_damaged shipping_damage carrier_damage "
    "damaged_on_arrival broken_in_transit",
    "not_as_described": "not_as_described item_not_as_described not_as_pictured "
    "not_as_advertised different_from_description inaccurate_website_description snad "
    "description_mismatch",
    "wrong_item": "wrong_item incorrect_item received_wrong_item wrong_item_sent item_not_ordered "
    "wrong_product different_item switcheroo",
    "size_fit": "too_small too_large too_big apparel_too_small apparel_too_large size_fit "
    "size_too_small size_too_large doesnt_fit does_not_fit fit_issue sizing",
    "missing_parts": "missing_parts missing_parts_or_accessories parts_missing missing_accessories "
    "incomplete missing_items missing_pieces",
    "changed_mind": "no_longer_needed unwanted_item unwanted changed_mind ordered_by_mistake "
    "bought_by_mistake accidental_order ordered_wrong_item not_needed customer_remorse "
    "duplicate_order",
    "late_delivery": "late_delivery missed_estimated_delivery arrived_late delivered_late "
    "arrived_too_late delivery_delay",
    "better_price": "better_price found_better_price better_price_available "
    "price_lower_elsewhere cheaper_elsewhere",
}
_WEAK = {
    "damaged_in_transit": "damaged damaged_item",
    "defective": "quality quality_unacceptable poor_quality broken",
    "size_fit": "wrong_size fit size apparel_style",
    "late_delivery": "late delay",
    "changed_mind": "unauthorized_purchase gift_unwanted",
}
CODE_MAP = {}
for _category, _codes in _STRONG.items():
    for _code in _codes.split():
        CODE_MAP[_code] = (_category, STRONG_CODE)
for _category, _codes in _WEAK.items():
    for _code in _codes.split():
        CODE_MAP[_code] = (_category, WEAK_CODE)

# Keyword rules: (pattern, weight) per category, matched on the lowercased text. The weights
# say how much a phrase alone tells: "arrived smashed" (4) settles it, "broken" (1.5) leans.
RULES = {
    "defective": (
        (r"stop(?:s|ped)? working|quit working|stopped (?:charging|turning on)", 4.0),
        (
            (
                r"(?:does|did)n'?t work|(?:does|did) not work|not working|"
                r"won'?t (?:turn on|charge|work)"
            ),
            3.5,
        ),
        (r"defective|faulty|malfunction\w*|dead on arrival|\bdoa\b", 3.5),
        (r"\bbroke\b|fell apart|came apart|falls apart", 2.5),
        (r"leak(?:s|ed|ing)?\b", 2.5),
        (r"after (?:a|one|two|three|a few|\d+) (?:day|days|week|weeks|use|uses|wash|washes)", 1.5),
        (
            (
                r"poor quality|cheap(?:ly)? made|flimsy|chipp(?:ed|ing)|peel(?:s|ed|ing)|"
                r"rust\w*"
            ),
            1.5,
        ),
        (r"battery|button|switch|zip(?:per)? (?:broke|stuck)|stitching|seam", 1.0),
        (r"\bbroken\b", 1.0),
    ),
    "damaged_in_transit": (
        (
            r"(?:arrived|came|delivered|showed up|was) "
            r"(?:broken|damaged|cracked|smashed|dented|crushed|shattered|in pieces)",
            4.0,
        ),
        (r"damaged (?:in|during) (?:transit|shipping|delivery|the post)", 4.0),
        (
            r"(?:box|package|packaging|parcel) (?:was |arrived "
            r")?(?:damaged|crushed|torn|soaked|wet|open|ripped)",
            3.0,
        ),
        (r"smashed|shattered|crushed|dented|in pieces", 2.0),
        (r"\bdamaged\b|\bbroken\b", 1.5),
        (r"courier|carrier|postman|in transit", 1.0),
    ),
    "not_as_described": (
        (r"not as (?:described|pictured|advertised|shown|listed)", 4.0),
        (
            (
                r"(?:does|did)n'?t match (?:the )?(?:description|photos?|pictures?|listing)|"
                r"(?:does|did) not match"
            ),
            4.0,
        ),
        (
            (
                r"(?:looks?|looked|is|was) (?:nothing|different|not) like|"
                r"different from the (?:photos?|pictures?|description|listing)"
            ),
            3.0,
        ),
        (r"misleading|counterfeit|\bfake\b|knock-?off", 3.0),
        (r"(?:colou?r|material|fabric|finish) (?:is |was )?(?:different|off|wrong|not)", 2.5),
        (
            r"(?:smaller|bigger|larger|thinner) than "
            r"(?:pictured|shown|described|advertised|expected|it looks)",
            2.5,
        ),
        (r"description|photos?|pictures?|listing|advertised", 1.5),
    ),
    "wrong_item": (
        (r"wrong (?:item|product|model|one|version|book|part)", 4.0),
        (
            r"(?:received|sent|got|shipped|delivered) (?:me "
            r")?(?:the |a |an )?(?:wrong|different|another|someone else'?s)",
            4.0,
        ),
        (r"(?:not|isn'?t|wasn'?t) what i ordered|never ordered", 4.0),
        (
            (
                r"wrong (?:colou?r|size) (?:sent|shipped|received|delivered)|"
                r"sent the wrong"
            ),
            4.0,
        ),
        (r"instead of", 2.0),
        (r"\bwrong\b", 1.0),
    ),
    "size_fit": (
        (r"too (?:small|big|large|tight|loose|short|long|narrow|wide|snug)", 3.5),
        (
            (
                r"runs? (?:small|large|big|narrow|wide|short|long)|(?:does|did)n'?t fit|"
                r"(?:does|did) not fit"
            ),
            3.5,
        ),
        (
            (
                r"sizing|size chart|size guide|"
                r"(?:smaller|larger|bigger) than (?:my )?(?:usual|normal) size"
            ),
            3.0,
        ),
        (r"\bsize\b|\bfit\b|\bfits\b", 1.5),
    ),
    "missing_parts": (
        (
            r"(?:parts?|pieces?|screws?|bolts?|cables?|charger|manual|instructions|lid|accessor(?:y|"
            r"ies)|remote|batteries) (?:were |was |are |is )?(?:missing|not included|absent)",
            4.0,
        ),
        (
            r"missing "
            r"(?:parts?|pieces?|screws?|bolts?|the|a|an|one|two|some|cable|charger|lid|instructions)",
            4.0,
        ),
        (r"incomplete|not included|only (?:one|1|two|2|half) (?:of|in)", 3.0),
        (r"\bmissing\b", 2.0),
    ),
    "changed_mind": (
        (r"changed my mind|(?:no longer|don'?t|do not) (?:need|want)|not needed", 4.0),
        (
            (
                r"(?:bought|ordered|purchased) (?:it )?(?:by|in) (?:mistake|error)|"
                r"ordered (?:the )?wrong|accidental(?:ly)?"
            ),
            4.0,
        ),
        (
            (
                r"(?:duplicate|double|twice) order|ordered twice|"
                r"found (?:one|it) at home|already have"
            ),
            3.0,
        ),
        (r"(?:didn'?t|did not|don'?t) like|not for me|decided|unwanted|gift", 2.0),
        (r"mistake|impulse", 1.5),
    ),
    "late_delivery": (
        (
            (
                r"(?:arrived|came|delivered|showed up) (?:too |very )?late|"
                r"(?:late|delayed) (?:delivery|shipment|parcel)"
            ),
            4.0,
        ),
        (
            (
                r"took (?:too long|forever|ages|weeks|(?:over |almost |nearly )?"
                r"(?:\d+|a|one|two|three|four|five|six|several|many) (?:days|weeks|months))|"
                r"never (?:arrived|came)"
            ),
            3.5,
        ),
        (r"(?:missed|after) (?:the )?(?:event|deadline|date|birthday|wedding|holiday|trip)", 3.0),
        (r"\blate\b|delay(?:ed|s)?", 1.5),
    ),
    "better_price": (
        (
            r"(?:cheaper|lower price|better price|better "
            r"deal|less) (?:elsewhere|somewhere else|at|on|in|from)",
            4.0,
        ),
        (
            (
                r"found (?:it |one )?(?:cheaper|for less)|"
                r"price (?:dropped|went down|is lower)"
            ),
            4.0,
        ),
        (r"better (?:price|deal|offer)|cheaper|price match", 2.5),
    ),
}
_COMPILED = {
    category: tuple((re.compile(pattern), weight) for pattern, weight in rules)
    for category, rules in RULES.items()
}


def normalize_code(code: object) -> str:
    if not code:
        return ""
    return re.sub(r"[^a-z0-9]+", "_", str(code).lower()).strip("_")


def classify_text(text: str | None) -> tuple[str, float] | None:
    """``(category, confidence)`` from the keyword rules, or None when nothing matched."""
    if not text:
        return None
    lowered = text.lower().replace("\u2019", "'")
    scores = {}
    for category, rules in _COMPILED.items():
        total = 0.0
        for regex, weight in rules:
            if regex.search(lowered):
                total += weight
        if total:
            scores[category] = total
    if not scores:
        return None
    # highest score; ties go to the category listed first (the more specific problem)
    best = max(scores, key=lambda c: (scores[c], -CATEGORIES.index(c)))
    share = scores[best] / math.fsum(scores.values())
    confidence = share * (1.0 - math.exp(-scores[best] / 2.0))
    return best, round(min(confidence, 0.95), 2)


def classify_return(reason: str | None, reason_text: str | None) -> tuple[str, float]:
    """``(category, confidence)`` of one return."""
    mapped = CODE_MAP.get(normalize_code(reason))
    if mapped is not None and mapped[1] >= STRONG_CODE:
        return mapped
    from_text = classify_text(reason_text)
    if mapped is None:
        if from_text is None:
            return ("other", UNKNOWN_CONFIDENCE)
        return from_text
    if from_text is None:
        return mapped
    if from_text[0] == mapped[0]:
        # the code and the words agree: both pieces of evidence count
        return (mapped[0], round(min(0.99, 1 - (1 - mapped[1]) * (1 - from_text[1])), 2))
    return from_text if from_text[1] > mapped[1] else mapped
