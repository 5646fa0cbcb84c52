"""The sentences of a description that speak of another thing than the product (round 6
of issue 30): they are no evidence for a keyword suggestion.

A sentence is left out when it speaks of
- an accessory or an extra: "sold separately", "available separately", "as an extra",
  "optional", "accessory" ("An ionic brush attachment is sold separately"; not "an
  extra-soft head", round 7);
- another model the merchant points to: "choose our ...", "consider", "upgrade to", "our
  ... model/version/range" ("For drop protection choose our shockproof rugged model");
- a part set against the product itself: "separate", "itself is/has/does..." ("The
  separate inner tub is leakproof; the wooden box itself is not"; not "switches itself
  off");
- something the buyer should add: "helps", "recommend", "apply" ("the base is uncoated, so
  a non-stick spray helps").
When unsure, a sentence is left out: no suggestion is better than a doubtful one.
"""

import re

_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_ASIDE = re.compile(
    r"\b(?:separately|separate|extras?(?!-\w)|optional(?:ly)?|accessor(?:y|ies)|add-ons?|"
    r"itself\s+(?:is|isn|are|aren|has|hasn|does|doesn|can|cannot|won|will|was|wasn)|"
    r"choose|consider|upgrade|opt\s+for|prefer|recommend(?:ed|s)?|helps?|apply|"
    r"our(?:\s+\w+){0,3}\s+(?:models?|versions?|range|line|collection))\b",
    re.IGNORECASE,
)


def without_asides(description: str | None) -> str | None:
    """``description`` without its sentences about another thing (module docstring)."""
    if not description:
        return description
    return " ".join(
        sentence for sentence in _SENTENCE.findall(description) if not _ASIDE.search(sentence)
    )
