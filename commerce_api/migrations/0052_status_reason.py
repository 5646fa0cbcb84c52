"""``status_reason`` on ``webhook_endpoint`` and ``marketplace_connection``: why the
service cannot use the endpoint or connection right now although it is active (its stored
secret cannot be decrypted with the configured keys); null when it works. Shown in the
API; cleared by the first use that works again."""


def up(migrator, db):
    for table in ("webhook_endpoint", "marketplace_connection"):
        columns = {column.name for column in db.get_columns(table)}
        if "status_reason" not in columns:
            db.execute_sql(f'ALTER TABLE "{table}" ADD COLUMN "status_reason" TEXT')
