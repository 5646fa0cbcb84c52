"""Which clauses of a description assert nothing of the product (rounds 11 and 12 of issue
30): a clause with a condition or a modal ("if you need night vision, ...", "a remote
would be nice"), "sold separately", "optional", a comparison ("compared to", "versus"),
one that opens with an instruction to the buyer ("keep the air intake oil free") and one
that ends in a question mark ("Need night vision? See ..."). Their words are no evidence
for a keyword suggestion (``listing_keywords.phrases_of``).
"""

from .listing_referents import CLAUSE_END
from .listing_title import unpromoted_tokens, word_set

# a clause that opens with one of these is an instruction to the buyer ("keep the air intake
# oil free", "wipe the lid dry"), no claim about the product (round 12)
INSTRUCTIONS = word_set("keep clean wipe empty store rinse descale wash remove avoid leave allow")
# words that make their clause assert nothing of the product ("if you need night vision,
# ...", "a remote would be nice", "the charging stand is sold separately"; round 11)
UNASSERTED = word_set(
    "if unless whether would could might should separately optional compared versus vs"
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
            hedge = hedge or word in UNASSERTED or (not clause and word in INSTRUCTIONS)
            clause.append(index)
    return hedged
