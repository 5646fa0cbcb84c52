"""Pricing: rules, competitor offers, recommendations and repricing jobs."""
