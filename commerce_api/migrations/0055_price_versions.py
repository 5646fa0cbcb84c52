"""``listing.price_version`` and ``pricing_recommendation.listing_price_version``: a price
push that is resumed or retried is dropped when a newer price of its listing has been
pushed or accepted since (issue 31).

``listing.price_version`` grows with every price the listing takes (a price push the
marketplace accepted, a ``PATCH`` of the listing's price); a recommendation remembers the
version of the price it was computed from, and a job pushing it (again) first checks that
no newer price came since. Existing rows start at 0 and null (a recommendation made before
this migration is pushed as before).
"""


def _add(db, table, column, definition):
    if column not in {c.name for c in db.get_columns(table)}:
        db.execute_sql(f'ALTER TABLE "{table}" ADD COLUMN "{column}" {definition}')


def up(migrator, db):
    _add(db, "listing", "price_version", "INTEGER NOT NULL DEFAULT 0")
    _add(db, "pricing_recommendation", "listing_price_version", "INTEGER")
