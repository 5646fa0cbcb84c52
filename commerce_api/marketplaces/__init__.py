"""Marketplace connections and their connectors (sandbox, http)."""
