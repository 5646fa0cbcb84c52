"""``tenant.auth_version``: revocation, key changes and plan changes take effect at once."""


def up(migrator, db):
    from playhouse.migrate import migrate

    from commerce_api.auth.models import Tenant

    columns = {column.name for column in db.get_columns(Tenant._meta.table_name)}
    if "auth_version" not in columns:
        migrate(migrator.add_column(Tenant._meta.table_name, "auth_version", Tenant.auth_version))
