"""A bundle has no inventory record of its own (DESIGN 14): drop the empty record a product
kept when it became a bundle (before ``inventory.bundles.drop_own_record`` did it), so the
inventory list, its filters and its totals never show one. Its stock rows (all empty) and
their ledger history stay. The list counts follow through their triggers.

Plain SQL on both engines; no live model is imported.
"""


def up(migrator, db):
    db.execute_sql(
        'DELETE FROM "inventory_summary" WHERE "product_id" IN'
        ' (SELECT "bundle_id" FROM "bundle_component")'
    )
