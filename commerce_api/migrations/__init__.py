"""Versioned schema migrations, applied in numeric order by ``commerce-api init-db``.

Each file defines ``up(migrator, db)`` and is recorded in the ``schema_migration`` table
once applied (peewee's ``playhouse.migrations`` runner). The files up to the first release
create the initial tables from the domain models; every change after a release is a new
file that alters the schema with ``migrator`` operations and never edits an applied one.
"""

import os

from playhouse.migrations import Migration, Runner

DIRECTORY = os.path.dirname(os.path.abspath(__file__))


def upgrade(database):
    """Apply every pending migration; returns the names applied."""
    return Runner(database, directory=DIRECTORY).up()


def status(database):
    return Runner(database, directory=DIRECTORY).status()


TABLE = "schema_migration"  # playhouse.migrations' history table


def has_schema(database):
    """True once ``init-db`` ran on this database (its history table exists)."""
    return database.table_exists(TABLE)


def pending(database):
    """The names of the migration files not applied yet (all of them before ``init-db``)."""
    names = [m.name for m in Migration.load_directory(DIRECTORY)]
    if not has_schema(database):
        return names
    applied = {row[0] for row in database.execute_sql(f"SELECT name FROM {TABLE}")}
    return [name for name in names if name not in applied]
