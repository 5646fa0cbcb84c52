"""What a priced budget has out (issue 33, Shopify's query cost): ``marketplace_rate_budget``
gains ``in_flight`` (the points of calls drawn and not answered yet) and ``draws`` (how many
priced calls drew from it: the newest one's number). An answer that says how much the
marketplace has left may raise the budget to it only when no other call is out and none
drew after it (``marketplaces.budgets.observe``).

Plain SQL on both engines; no live model is imported. Existing rows start at 0.
"""

COLUMNS = (
    ("in_flight", "DOUBLE PRECISION NOT NULL DEFAULT 0"),
    ("draws", "INTEGER NOT NULL DEFAULT 0"),
)


def up(migrator, db):
    present = {column.name for column in db.get_columns("marketplace_rate_budget")}
    for name, declaration in COLUMNS:
        if name not in present:
            db.execute_sql(
                f'ALTER TABLE "marketplace_rate_budget" ADD COLUMN "{name}" {declaration}'
            )
