"""What the frozen migrations share: their model base and the stubs of older tables.

Not a migration: the runner loads only the files whose name starts with a digit
(``Migration.load_directory``). Like a migration, it imports no live model.

The tables a migration creates are frozen in it as it creates them on a new database (no
live model is imported): see migrations/__init__.py. JSON and encrypted fields are TEXT
columns, money a DECIMAL(14, 2) (the live fields' column types); defaults are the code's,
not the database's, and are left out.
"""

from peewee import CharField, Model


class Frozen(Model):
    class Meta:
        legacy_table_names = False  # index names start with the table name, as the models'


def stub(table_name: str, key_length: int) -> type[Frozen]:
    """A table created by an earlier migration, of which only its key is referenced (the
    target of a foreign key): a new class on each call, so no two migrations share one."""
    name = "".join(part.title() for part in table_name.split("_"))
    meta = type("Meta", (), {"table_name": table_name})
    body = {
        "__module__": __name__,
        "id": CharField(max_length=key_length, primary_key=True),
        "Meta": meta,
    }
    return type(name, (Frozen,), body)
