"""Which clauses of a description assert nothing of the product (rounds 11 and 12 of issue
30): a clause with a condition or a modal ("if you need night vision, ...", "a remote
would be nice"), "sold separately", "optional", a comparison ("compared to", "versus"),
one that opens with an instruction to the buyer ("keep the air intake oil free") and one
that ends in a question mark ("Need night vision? See ..."); round 13: one about a later
model ("a detachable jug is planned for next year's model", "upcoming models add a timer")
or an earlier one ("it used to have", "no longer", "formerly"), and one of what buyers wish
or ask for. Their words are no evidence for a keyword suggestion
(``listing_keywords.phrases_of``).
"""

import re

from .listing_referents import CLAUSE_END
from .listing_title import unpromoted_tokens, word_set

# a clause that opens with one of these is an instruction to the buyer ("keep the air intake
# oil free", "wipe the lid dry"), no claim about the product (round 12)
INSTRUCTIONS = word_set("keep clean wipe empty store rinse descale wash remove avoid leave allow")
# words that make their clause assert nothing of the product ("if you need night vision,
# ...", "a remote would be nice", "the charging stand is sold separately"; round 11)
UNASSERTED = word_set(
    "if unless whether would could might should separately optional compared versus vs "
    "wish wishes wished hope hopes ask asks asked request requests requested "
    "wishing hoping asking requesting"  # "customers keep asking for ..." (round 21)
    # hearsay: "reviewers call its lowest speed a night mode", "some shops list it with a
    # timer" (round 28)
    " reviewers reviewer reportedly supposedly rumoured rumored claim claims claimed shops"
    " retailers sellers"
)

# a clause about a later model of the shop, not this product (round 13): one with a word of
# ``FUTURE``, "in development", "coming soon", or one of ``LATER`` at most three words before
# one of ``RELEASES`` ("comes with next year's model", "will arrive in a later version")
FUTURE = word_set("planned upcoming forthcoming formerly previously discontinued removed")
LATER = word_set("next later future coming previous older earlier first original old")
# "it used to have", "no longer": what the product was, not what it is
_USED_TO = word_set("have be come ship include offer carry")
RELEASES = word_set(
    "model models version versions generation edition editions range release releases "
    "update year spring summer autumn fall winter season"
)
_LATER_REACH = 3


def _future(words: list[str | None], index: int, word: str) -> bool:
    """True when ``words[index]`` (``word``) makes its clause speak of a later model."""
    if word in FUTURE:
        return True
    previous = words[index - 1] if index else None
    if (word, previous) in (("development", "in"), ("soon", "coming"), ("longer", "no")):
        return True
    if previous == "to" and word in _USED_TO and index > 1 and words[index - 2] == "used":
        return True
    return word in RELEASES and any(
        words[back] in LATER for back in range(max(index - _LATER_REACH, 0), index)
    )


def hedged_clauses(words: list[str | None], text: str | None) -> set[int]:
    """The indexes of ``words`` (``phrase_words(text)``) in a clause with a word of
    ``UNASSERTED``, opening with one of ``INSTRUCTIONS`` or ending in a question mark
    ("Need night vision? See ...")."""
    ends = iter(CLAUSE_END.findall(" ".join(unpromoted_tokens(text))))
    hedged, clause, hedge = set(), [], False
    for index, word in enumerate([*words[1:], None], start=1):
        if word is None:
            if hedge or next(ends, None) == "?":
                hedged.update(clause)
            clause, hedge = [], False
        else:
            hedge = (
                hedge
                or word in UNASSERTED
                or (not clause and word in INSTRUCTIONS)
                or _future(words, index, word)
            )
            clause.append(index)
    return hedged


# a line of a specification: "Label: no" / "Label: yes" (round 14)
_SPEC_ANSWER = re.compile(
    r"(^|[.;!?\n]\s*)([A-Za-z][^:.;!?\n]{0,60}?)\s*:\s*"
    r"(no|none|not included|not available|n/a|yes)(?=\s*(?:[.;,(\n]|$))",
    re.IGNORECASE,
)


def spec_lines(text: str) -> str:
    """``text`` with its lines read as clauses and the answers of its specification lines
    said in words: "Smokeless: no" is "not Smokeless", "Floating plates: yes" is "Floating
    plates" (round 14)."""

    def said(match: re.Match) -> str:
        start, label, answer = match.groups()
        return f"{start}{label}" if answer.casefold() == "yes" else f"{start}not {label}"

    text = re.sub(r"[ \t]*\n\s*", ".\n", text.strip())  # a line ends its clause
    return _SPEC_ANSWER.sub(said, text)
