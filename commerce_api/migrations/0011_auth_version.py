"""``tenant.auth_version``: revocation, key changes and plan changes take effect at once."""

from peewee import IntegerField


def up(migrator, db):
    from playhouse.migrate import migrate

    columns = {column.name for column in db.get_columns("tenant")}
    if "auth_version" not in columns:
        migrate(migrator.add_column("tenant", "auth_version", IntegerField(default=0)))
