"""Versioned schema migrations, applied in numeric order by ``commerce-api init-db``.

Each file defines ``up(migrator, db)`` and is recorded by its name (the file name without
``.py``) in the ``schema_migration`` table once applied (peewee's ``playhouse.migrations``
runner), so an applied file is never renamed. Every change after a release is a new file
that alters the schema with ``migrator`` operations or SQL and never edits an applied one.

A migration imports no live model (``tests/migrations/test_frozen.py``): a file that
creates tables defines them itself, as minimal peewee models bound to the migrated
database for the call, so a later change to a domain model cannot change or break it. The
tables of the first files are frozen as those files created them on a new database when
they still used the live models: with every column and index that a later file adds to
older databases (those later files check first, and change nothing on a new database).
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
