"""The analysis jobs' tables: the per-tenant review store."""


def up(migrator, db):
    from commerce_api.analysis.reviews import Review

    db.create_tables([Review])
