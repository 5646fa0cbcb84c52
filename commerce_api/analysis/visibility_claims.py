"""Words and sizes of a unit that another product named in it claims (``visibility_match``;
rounds 7, 40 and 47 of issue 30, docs/decisions.md): a size said only beside another
product's words is that product's (``unclaimed``), and so is a word said once that a
product with more words found also has (``unclaimed_words``)."""

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from .listing_title import stem
from .visibility_sizes import sizes_of
from .visibility_words import words_of

_PARTS = re.compile(r"[,;:]|\s(?:and|plus)\s", re.IGNORECASE)  # the parts of a list


def unclaimed(
    text: str,
    sizes: Mapping[str, set[str]],
    sku: str,
    found: Mapping[str, frozenset[str]],
    product_sizes: Mapping[str, Mapping[str, set[str]]],
    min_found: int,
) -> dict[str, set[str]]:
    """``sizes`` (of ``text``) without the amounts that are another product's: one its title
    has (and ``sku``'s does not), found in the unit with at least ``min_found`` of its words,
    said only in parts of ``text`` (cut at commas, "and", ";") without a word of ``sku``'s."""
    if not sizes or len(found) < 2:
        return dict(sizes)
    ours, own = found[sku], product_sizes[sku]
    parts = [(sizes_of(part), set(words_of(part))) for part in _PARTS.split(text)]
    out = {}
    for unit, amounts in sizes.items():
        claimed = {
            amount
            for other, words in found.items()
            if other != sku and len(words) >= min_found
            for amount in amounts & product_sizes[other].get(unit, set())
            if amount not in own.get(unit, set())
            and not any(amount in said.get(unit, ()) and words & ours for said, words in parts)
        }
        if amounts - claimed:
            out[unit] = amounts - claimed
    return out


def unclaimed_words(
    titled: Mapping[str, frozenset[str]],
    titles: Mapping[str, frozenset[str]],
    keys: Sequence[str],
    min_found: int,
    sized: AbstractSet[str] = frozenset(),
    kinds: Mapping[str, str | None] | None = None,
    variants: AbstractSet[str] = frozenset(),
) -> dict[str, frozenset[str]]:
    """``titled`` (the products a unit names by their words found) without those whose
    words are another's: a word said once that a product with more words found in the unit
    also has is that product's ("<brand>'s masking fluid with the ruling pen ... on water"
    does not name our "Water Brush Pens" by "water" and the fluid's "pen"); a product keeps its
    name when what is left is ``min_found`` words, or its whole title is found. A size of
    its title the unit says (``sized``: those products) counts as one more word ("a schooner
    fits in the 500 ml flat bottle" of our "Flat Bottle 500 ml" and "Schooner in a Bottle
    Kit"; round 40). A variant of the product (its title differs only by ``variants``
    words) claims none of its words."""
    said = Counter(stem(key) for key in keys)
    weight = {sku: len(found) + (sku in sized) for sku, found in titled.items()}
    kept = {}
    for sku, found in titled.items():
        claimed: set[str] = {
            word
            for other, theirs in titled.items()
            if other != sku
            and weight[other] > weight[sku]
            and theirs != found
            # (not a variant of it: "both <brand> baskets, massicot and zinc white"; round 50)
            and not (titles[sku] != titles[other] and (titles[sku] ^ titles[other]) <= variants)
            for word in found & theirs
            if said[word] <= 1
        }
        if (
            found == titles[sku]
            or not claimed
            or (
                len(found - claimed) >= min_found
                and not _kind_taken(sku, claimed, titled, weight, kinds)
            )
        ):
            kept[sku] = found
    return kept


def _kind_taken(sku, claimed, titled, weight, kinds):
    """True when the word of ``sku``'s kind is ``claimed`` (said once, a word of a product
    with more words found) and a product of another kind has it: "the grain sieve lid ...
    culturing milk kefir" does not name our "Live Milk Kefir Grains" (round 47); a variant of
    its kind keeps it ("the scroll chuck in both the M33 and the 1 inch threads")."""
    kind = (kinds or {}).get(sku)
    return kind in claimed and any(
        weight[other] > weight[sku] and kinds.get(other) != kind
        for other, theirs in titled.items()
        if other != sku and kind in theirs
    )


def variant_of_led(
    sku: str,
    led: AbstractSet[str] | None,
    words: Mapping[str, frozenset[str]],
    kind_of: Callable[[str], str | None],
    variant_stems: AbstractSet[str],
    keys: Sequence[str],
) -> bool:
    """True when ``sku`` differs from a product of its kind that the brand leads into
    (``led``, ``visibility_evidence.brand_leads``) only by variant words, the first of them
    said after "in": "Paint the body in <brand> sap green and the wheels in mars black" names
    the mars black paint too (round 48)."""
    stems = [stem(key) for key in keys]
    for other in led or ():
        own = words[sku] - words[other]
        if other == sku or not own or not own <= variant_stems or kind_of(other) != kind_of(sku):
            continue
        said = [i for i, word in enumerate(stems) if word in own]
        if not said or not said[0]:
            continue
        if keys[said[0] - 1] == "in":
            return True
        if keys[said[0] - 1] == "the" and keys[said[-1] + 1 : said[-1] + 2] == ["one"]:
            return True  # "... and my partner has the manganese violet one" (round 51)
    return False
