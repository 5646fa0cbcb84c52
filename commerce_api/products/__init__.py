"""The product catalog and its per-marketplace listings."""
