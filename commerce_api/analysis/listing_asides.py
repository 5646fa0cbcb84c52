"""The sentences of a description that speak of another thing than the product (round 6
of issue 30): they are no evidence for a keyword suggestion.

A sentence is left out when it speaks of
- an accessory or an extra: "sold separately", "available separately", "as an extra",
  "sold on its own", "a cover to fit it" (round 30),
  "optional", "accessory" ("An ionic brush attachment is sold separately"; not "an
  extra-soft head", round 7);
- another model the merchant points to: "choose our ...", "consider", "upgrade to", "our
  ... model/version/range" ("For drop protection choose our shockproof rugged model");
- a part set against the product itself: "separate", "itself is/has/does..." ("The
  separate inner tub is leakproof; the wooden box itself is not"; not "switches itself
  off");
- something the buyer should add: "helps", "recommend", "apply" ("the base is uncoated, so
  a non-stick spray helps").
A line of what shoppers search for, or of tags, is left out too (round 31), and a claim
that is hedged or unchecked, or said of one part set against another (round 35).
When unsure, a sentence is left out: no suggestion is better than a doubtful one.
"""

import re

from .listing_referents import COLOURS

_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_ASIDE = re.compile(
    r"\b(?:separately|separate|extras?(?!-\w)|optional(?:ly)?|accessor(?:y|ies)|add-ons?|"
    r"itself\s+(?:is|isn|are|aren|has|hasn|does|doesn|can|cannot|won|will|was|wasn)|"
    r"choose|consider|upgrade|opt\s+for|prefer|recommend(?:ed|s)?|helps?|apply|"
    r"available\s+for\s+(?:this|it|the)|(?:sold|bought)\s+on\s+its\s+own|to\s+fit\s+(?:it|this)|"
    # a maker's other goods, a part left out (round 34)
    r"makers?\s+of|left\s+out|left(?:\s+\w+){0,3}\s+off|omitted|"
    r"our(?:\s+\w+){0,3}\s+(?:models?|versions?|range|line|collection)|"
    # a claim hedged or unchecked, another product to pair with (round 35): "looks like it
    # has non-slip feet, but ...", "we believe ...", "it may give a fine mist ...; we have
    # not checked", "pair it with a rotating pen holder such as ..."
    r"looks?\s+like|seems?\s+to|we\s+(?:believe|think)|unconfirmed|unverified|might|"
    r"(?:not|n't)\s+(?:been\s+|yet\s+)?(?:confirmed|checked|verified|tested)|"
    r"may\s+(?:give|have|be|come)|pair\s+(?:it|this|them)\s+with|"
    # what the buyer may do to it, what it is too big or small for (round 37): "you can grind
    # a bevelled edge onto it yourself", "too large for use as sugar tongs"
    r"yourself|too\s+\w+\s+(?:for|to)|"
    # what owners make of it (round 50): "many owners file their own blunt tips"
    r"(?:their|your)\s+own\b(?!\s+(?:weight|stand|way))|"
    # another thing to use, an earlier run of the product (round 38): "use a dough scraper
    # with a bevelled edge for the bench", "earlier runs had an anti clog grid"
    r"use\s+(?:a|an|another|(?:it|them|this)\s+with)|(?:earlier|older|previous|former)\s+"
    r"(?:runs?|models?|versions?|batch(?:es)?|editions?|sets?|designs?)|"
    # what its packaging says or has (round 39): "the box says hanger tab, but ...", "the
    # display box is lined with swan feather down"
    r"(?:box|label|packaging|package|tag|sleeve)\s+(?:says|said|reads|claims)|"
    r"(?:display|gift|presentation)\s+(?:box|case|tin|bag)|"
    # another product shown beside it (round 40): "the salt glazed butter dish shown beside
    # it is another product"
    r"(?:is|are)\s+(?:an?\s+)?(?:another|different|separate)\s+products?|"
    # a term true only with an add-on, of earlier goods, of another item the text points to
    # (round 41): "ambidextrous only when fitted with the reversible crank kit", "earlier
    # screens in this line were seamless", "for toothed ones see GS-2"
    r"only\s+(?:when|if|once|with)|when\s+fitted\s+with|"
    r"(?:earlier|older|previous|former)\s+\w+s\s+(?:in|of|from|were|had)|"
    r"see\s+[a-z]{1,5}-\d+|for\s+\w+\s+ones|for(?:\s+[\w\-]+){1,3}\s+see\b|"
    # rivals' goods, a part that fits another model only (round 46): "Rival mats carry
    # measurement markings", "Replacement wires fit only the lever model"
    r"rivals?|competitors?|other\s+brands?|fits?\s+only|"
    r"only\s+(?:the|our)(?:\s+\w+){0,2}\s+(?:models?|versions?)|"
    r"(?:shown|pictured)\s+(?:beside|with|alongside|next\s+to)|"
    # an earlier mark of the product (round 47): "The Mk I had a rotary drum", "the original
    # one had a brass collar"
    r"(?:mk|mark|v|version|gen|generation|series)\.?\s*(?:\d+|[ivx]+)\s+(?:had|was|were|came|used)|"
    r"(?:original|old|first|earlier|previous)(?:\s+(?:one|model|version|edition|design|type))?"
    r"\s+(?:had|was|were|came|used)|"
    # ... of any name (round 49): "The old pattern had a spring return"
    r"(?:original|old|earlier|previous|former)\s+\w+\s+(?:had|came\s+with|used\s+to))\b",
    re.IGNORECASE,
)
# one part set against another: "The upper drawer is velvet lined; the lower one is bare
# pine" (round 35): said of a part, not of the whole product
_PARTS_OPPOSED = re.compile(
    r"\b(upper|top|inner|front|left)\b.*\b(lower|bottom|outer|back|right)\b"
    r"|\b(lower|bottom|outer|back|right)\b.*\b(upper|top|inner|front|left)\b"
    # ... or two parts set side by side ("The handle is seamless; the rim is spot welded";
    # round 41)
    r"|\bthe(?:\s+\w+){1,2}\s+(?:is|are)\b[^;]*;\s*the(?:\s+\w+){1,2}\s+(?:is|are)\b",
    re.IGNORECASE,
)
# an aside is left out with its clause ("Star tip head; a hardwood handle is sold
# separately": round 48), one that sets a part against the product or points at a picture
# with its sentence ("The removable liner is waterproof; the canvas boot itself is not")
_ACROSS = re.compile(
    r"\bitself\s+(?:is|isn|are|aren|has|hasn|does|doesn|can|cannot|won|will|was|wasn)\b|"
    r"\b(?:shown|pictured)\s+(?:beside|with|alongside|next\s+to)\b|\b(?:the|a)\s+\w+\s+pictured\b",
    re.IGNORECASE,
)
# another item's code ("The pusher from KS-7 fits them"; round 41): said of another product
_OTHER_CODE = re.compile(r"\b[A-Z]{2,5}-\d{1,4}[A-Z]?\b")


# a clause that speaks of another product of the shop: "... belongs to our kids' cutter",
# "the matching loaf tin is the non-stick one" (not "like all our tanks"; round 24)
# ... or of one part alone: "only the band behind the head is contoured" (round 24)
# ... or of another thing to use instead: "for motorhomes use heavy duty chocks instead",
# "steps rather than a dog ramp" (round 32)
_OTHER_OF_OURS = re.compile(
    r"\b(?:(?<!all )our\s+(?!own\b)\w+|matching|only\s+the(?:\s+\w+){1,5}?\s+(?:is|are)|"
    r"instead|rather\s+than|"
    # ... or of something else the sentence speaks of: "a mill that also saws red cedar", the
    # packaging: "packed in a jewellery box sleeve", "ships in a monitor stand carton" (round 34)
    r"(?:that|which|who)\s+also|(?:packed|packaged|ships|shipped|delivered)\s+in|"
    # what people do: "for calligraphers who hand cut their own quills" (round 39)
    r"who)\b",
    re.IGNORECASE,
)
# a finish that imitates a material: "resin with a cast iron effect finish", "faux oak"
# (round 32): the material is not the product's
_IMITATION = re.compile(
    r"\b(?:faux|imitation|mock)\s+\w+|\b\w+(?:[\s\-]\w+)?[\s\-](?:effect|look)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[^;:]+[;:]?")
# a sentence that defines a term ("Full tang means the steel runs through the handle; this one
# has a rat-tail tang"): the term is explained, not claimed (round 40)
_DEFINITION = re.compile(
    r"^\W*(?:[\w'\u2019\"]+[\s\-]+){1,5}(?:means|refers\s+to|stands\s+for)\b", re.IGNORECASE
)
# what the product is shaped like ("shaped like an oyster knife but thinner", "A cheese
# grater shaped like a pepper mill"): the words of the likeness are not the product's
_LIKENESS = re.compile(
    r"\b(?:(?:shaped|styled)\s+like|similar\s+to|resembl(?:es?|ing))\s+(?:an?\s+|the\s+)?"
    r"[\w\-]+(?:\s+(?!(?:but|and|with|for|or|in)\b)[\w\-]+){0,2}",
    re.IGNORECASE,
)
# a file's name or an address ("see beech-handle-care.pdf", "https://..."): its words name a
# document, not the product (round 38)
_FILES = re.compile(
    r"\bhttps?://\S+|\b[\w\-]+\.(?:pdf|docx?|txt|csv|xlsx?|zip|png|jpe?g|gif|html?)\b",
    re.IGNORECASE,
)
# text struck through in Markdown ("~~Heavy gauge~~ Light tinplate"): withdrawn (round 24)
_STRUCK = re.compile(r"~~.*?~~", re.DOTALL)
# a name inside a sentence: three or more capitalised words after a lower-case word ("made
# for the Nano Glass Salon chain"), or two ending in a colour ("comes in Blackout Blue"): the
# words of a shop, a lab or a colour's name say nothing of the product (round 24)
# a line of what shoppers search for or of tags ("Customers also search for: wall hung wine
# rack, decanter", "Tags: ..."): words put beside the product, not said of it (round 31),
# also after a sentence on the same line (round 33)
_SEARCHES = re.compile(
    r"(?:^|(?<=[.!?;]))[^\S\n]*[^\n:.!?;]{0,40}\b(?:search(?:es|ed)?|tags?|keywords?|hashtags?)\b"
    r"[^\n:.!?;]{0,20}:[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
_CAPITALISED = r"[A-Z][a-z]+(?:-[A-Za-z]+)?"
_NAME = re.compile(r"(?<=[a-z,;] )" + _CAPITALISED + r"(?:\s+" + _CAPITALISED + r")+\b")


# either hand, no parts: "A marking gauge for left and right hands" (round 54)
_HANDS = re.compile(r"\b(?:left\s+(?:and|or)\s+right|right\s+(?:and|or)\s+left)\b", re.I)
# what a clause sets the product against: "A marking gauge with a steel pin rather than a wheel
# cutter" says the gauge and its pin (round 54)
_RATHER = re.compile(r"\s*\brather\s+than\b.*", re.IGNORECASE | re.DOTALL)


def _before_rather(clause: str) -> str:
    """``clause`` up to its "rather than", when a noun phrase comes before it."""
    cut = _RATHER.search(clause)
    return clause[: cut.start()] if cut and len(clause[: cut.start()].split()) >= 3 else clause


def _without_names(sentence: str) -> str:
    def name(match: re.Match) -> str:
        words = match.group().split()
        named = len(words) >= 3 or words[-1].casefold() in COLOURS
        return "…" if named else match.group()

    return _NAME.sub(name, sentence)


def without_asides(description: str | None) -> str | None:
    """``description`` without its sentences about another thing, what it strikes through
    and the names it says (module docstring)."""
    if not description:
        return description
    description = _FILES.sub(" ", _STRUCK.sub(" ", description))
    description = _SEARCHES.sub(" ", description)
    description = _LIKENESS.sub(" … ", _IMITATION.sub(" … ", description))
    return " ".join(
        "".join(
            _without_names(clause)
            for clause in map(_before_rather, _CLAUSE.findall(sentence))
            if not _OTHER_OF_OURS.search(clause) and not _ASIDE.search(clause)
        )
        for sentence in _SENTENCE.findall(description)
        if not _ACROSS.search(sentence)
        and not _PARTS_OPPOSED.search(_HANDS.sub(" ", sentence))
        and not _DEFINITION.match(sentence)
        and not _OTHER_CODE.search(sentence)
    )
