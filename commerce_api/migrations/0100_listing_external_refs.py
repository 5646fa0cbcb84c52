"""Shopify (DESIGN 13): ``listing.external_refs``, the marketplace-side ids a listing is
pushed by besides its ``external_id`` (Shopify: the variant's product and inventory item,
resolved once from the SKU), and what the marketplace last took of the listing's price and
status (a JSON object; NULL: nothing resolved yet).

Plain SQL on both engines; no live model is imported.
"""


def up(migrator, db):
    present = {column.name for column in db.get_columns("listing")}
    if "external_refs" not in present:
        db.execute_sql('ALTER TABLE "listing" ADD COLUMN "external_refs" TEXT')
