"""Jobs report progress while they run: ``{done, total}``."""


def up(migrator, db):
    from playhouse.migrate import migrate

    from commerce_api.jobs.models import Job

    columns = {column.name for column in db.get_columns(Job._meta.table_name)}
    if "progress" not in columns:
        migrate(migrator.add_column(Job._meta.table_name, "progress", Job.progress))
