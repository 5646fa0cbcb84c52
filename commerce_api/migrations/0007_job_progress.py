"""Jobs report progress while they run: ``{done, total}``."""

from peewee import TextField


def up(migrator, db):
    from playhouse.migrate import migrate

    columns = {column.name for column in db.get_columns("job")}
    if "progress" not in columns:
        # JSON as text, as the job's other JSON columns
        migrate(migrator.add_column("job", "progress", TextField(null=True)))
