"""Per-marketplace listing profiles: the limits ``listing_optimize`` checks against.

Figures follow each marketplace's published seller guidelines where one exists (title
length limits, word repetition, required identifiers) and common practice otherwise
(minimum description length, number of images); see docs/decisions.md.
"""

import re
from dataclasses import dataclass, field

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class ListingProfile:
    name: str
    title_min: int = 25  # characters
    title_max: int = 150
    max_word_repeats: int = 2  # the same word more often than this is keyword stuffing
    description_min: int = 100  # characters
    images_min: int = 3
    # severities that differ from the default ones (GTIN required on some marketplaces)
    severities: dict = field(default_factory=dict)

    def severity(self, code: str, default: str) -> str:
        return self.severities.get(code, default)


DEFAULT_PROFILE = ListingProfile("default")

PROFILES = {
    "default": DEFAULT_PROFILE,
    # Amazon: titles up to 200 characters, no word more than twice, GTIN (or an exemption)
    # required to list; 5+ images is the usual recommendation (up to 9).
    "amazon": ListingProfile(
        "amazon",
        title_min=30,
        title_max=200,
        max_word_repeats=2,
        description_min=150,
        images_min=5,
        severities={"GTIN_MISSING": "error", "TITLE_PROMOTIONAL": "error"},
    ),
    # eBay: titles are cut at 80 characters; every word counts, so no repeats.
    "ebay": ListingProfile(
        "ebay",
        title_min=25,
        title_max=80,
        max_word_repeats=1,
        description_min=100,
        images_min=3,
    ),
    # Etsy: titles up to 140 characters; handmade goods often have no GTIN.
    "etsy": ListingProfile(
        "etsy",
        title_min=25,
        title_max=140,
        max_word_repeats=1,
        description_min=150,
        images_min=5,
        severities={"GTIN_MISSING": "info"},
    ),
    # Walmart: product names are recommended under 90 characters; a GTIN is required.
    "walmart": ListingProfile(
        "walmart",
        title_min=25,
        title_max=90,
        max_word_repeats=2,
        description_min=150,
        images_min=4,
        severities={"GTIN_MISSING": "error"},
    ),
}

_FAMILY = re.compile(r"[a-z]+")


def profile_for(marketplace: str | None) -> ListingProfile:
    """The profile of a marketplace identifier: ``amazon_us`` and ``amazon-de`` use
    ``amazon``; unknown identifiers and None use ``default``."""
    if not marketplace:
        return DEFAULT_PROFILE
    match = _FAMILY.match(marketplace.strip().lower())
    return PROFILES.get(match.group(0) if match else "", DEFAULT_PROFILE)
