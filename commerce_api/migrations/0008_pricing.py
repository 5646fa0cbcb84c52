"""Pricing: rules, recommendations, competitor offer history and the latest offer table."""


def up(migrator, db):
    from commerce_api.pricing.models import (
        CompetitorLatest,
        CompetitorOffer,
        PricingRule,
        Recommendation,
    )

    db.create_tables([PricingRule, Recommendation, CompetitorOffer, CompetitorLatest])
