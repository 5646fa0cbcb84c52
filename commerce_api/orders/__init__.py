"""Orders collected from the marketplaces."""

# Importing orders tells products which SKUs open orders hold (archive is refused).
from . import queries  # noqa: F401
