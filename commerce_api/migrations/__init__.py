"""Versioned schema migrations, applied in numeric order by ``commerce-api init-db``.

Each file defines ``up(migrator, db)`` and is recorded in the ``schema_migration`` table
once applied (peewee's ``playhouse.migrations`` runner). The files up to the first release
create the initial tables from the domain models; every change after a release is a new
file that alters the schema with ``migrator`` operations and never edits an applied one.
"""

import os

from playhouse.migrations import Runner

DIRECTORY = os.path.dirname(os.path.abspath(__file__))


def upgrade(database):
    """Apply every pending migration; returns the names applied."""
    return Runner(database, directory=DIRECTORY).up()


def status(database):
    return Runner(database, directory=DIRECTORY).status()
