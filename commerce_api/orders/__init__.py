"""Orders collected from the marketplaces."""
