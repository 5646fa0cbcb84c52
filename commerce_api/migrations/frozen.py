"""What the frozen migrations share: their model base and the stubs of older tables.

Not a migration: the runner loads only the files whose name starts with a digit
(``Migration.load_directory``). Like a migration, it imports no live model.

The tables a migration creates are frozen in it as it creates them on a new database (no
live model is imported): see migrations/__init__.py. JSON and encrypted fields are TEXT
columns, money a DECIMAL(14, 2) (the live fields' column types); defaults are the code's,
not the database's, and are left out.
"""

import base64
import hashlib
import os

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from peewee import CharField, Model, PostgresqlDatabase


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


# -- At-rest encryption as ``crypto.py`` wrote it when 0012 and 0025 were made -------------
# A frozen copy, so those migrations import no live module: a later change to crypto.py
# (its key handling, its checks, the models it knows) cannot change what they write. The
# format is the live one's: "fernet:" + a Fernet token under the first key, each key a
# SHA-256 of "commerce-api:" + its text; without COMMERCE_SECRET_KEY, the key file beside
# the SQLite database (else ./instance/secret.key), made on first use.

SECRET_PREFIX = "fernet:"
SECRET_KEY_SAMPLE = 20  # stored secrets per column tried before anything is written


def _secret_key_setting():
    from flask import current_app, has_app_context

    if has_app_context():
        return current_app.config.get("SECRET_KEY")
    return os.environ.get("COMMERCE_SECRET_KEY")


def _key_file(database):
    database = getattr(database, "obj", None) or database  # the DatabaseProxy's database
    path = getattr(database, "database", None)
    if (
        isinstance(database, PostgresqlDatabase)
        or not path
        or path == ":memory:"
        or path.startswith("file:")
    ):
        path = None
    directory = os.path.dirname(os.path.abspath(path)) if path else os.path.abspath("instance")
    return os.path.join(directory, "secret.key")


def _read_or_create(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().strip()
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    key = base64.urlsafe_b64encode(os.urandom(32))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        with open(path, "rb") as handle:
            return handle.read().strip()
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    return key


def _fernet_of(material):
    digest = hashlib.sha256(b"commerce-api:" + material).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


class SecretBox:
    """Encrypts values as ``crypto.encrypt`` stored them, with the configured keys. Before
    the first value is written, it refuses (RuntimeError) when secrets are stored in
    ``columns`` (``(table, column)``) and the keys read none of them, as crypto.py did; the
    keys (and the key file) are read on first use only."""

    def __init__(self, database, columns):
        self._database = database
        self._columns = columns
        self._fernet = None

    def encrypt(self, text):
        if text is None:
            return None
        if self._fernet is None:
            self._fernet = self._open()
        return SECRET_PREFIX + self._fernet.encrypt(text.encode()).decode()

    def _open(self):
        keys = [part.strip() for part in str(_secret_key_setting() or "").split(",")]
        materials = [key.encode() for key in keys if key]
        if not materials:
            materials = [_read_or_create(_key_file(self._database))]
        fernet = MultiFernet([_fernet_of(material) for material in materials])
        sampled = readable = 0
        p = self._database.param
        for table, column in self._columns:
            rows = self._database.execute_sql(
                f"SELECT {column} FROM {table} WHERE {column} LIKE {p} LIMIT {SECRET_KEY_SAMPLE}",
                (SECRET_PREFIX + "%",),
            ).fetchall()
            for (value,) in rows:
                sampled += 1
                try:
                    fernet.decrypt(value[len(SECRET_PREFIX) :].encode())
                except InvalidToken:
                    continue
                readable += 1
        if sampled and not readable:
            raise RuntimeError(
                f"COMMERCE_SECRET_KEY decrypts none of the {sampled} stored secrets: set the"
                " key(s) they were written with. No secret is written with it."
            )
        return fernet
