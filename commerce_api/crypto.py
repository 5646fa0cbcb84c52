"""Secrets at rest: Fernet (AES-128-CBC + HMAC-SHA256) with keys from COMMERCE_SECRET_KEY.

``COMMERCE_SECRET_KEY`` is a comma list of keys (any strings): the first encrypts, every
one decrypts (``MultiFernet``), so a new key goes first and the old one stays second until
``commerce-api secrets rotate`` has re-encrypted every stored secret with the new one.
Without it a random key is made once and kept in a ``secret.key`` file beside the SQLite
database (or in ``./instance/`` on PostgreSQL), readable by its owner only. Several hosts
sharing one PostgreSQL database must all set the same ``COMMERCE_SECRET_KEY``.

A stored secret that no key decrypts is an error (``SecretUnreadable``), never a silent
None: the operator dropped or changed a key that is still needed.
"""

import base64
import hashlib
import logging
import os
import threading

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from peewee import Model, TextField

from . import sql
from .config import current_config
from .db import db, sqlite_file
from .errors import ApiError

log = logging.getLogger("commerce_api.crypto")

PREFIX = "fernet:"  # what marks a stored value as encrypted
_lock = threading.Lock()
_cache = {}  # (secret key setting, key file) -> MultiFernet
FIELDS = []  # every EncryptedTextField bound to a model: what ``rotate_all`` re-encrypts


class SecretUnreadable(ApiError):
    """A stored secret that none of the configured keys decrypts (503 in a request: the
    operator must put the missing key back; a job fails with it, not retried)."""

    def __init__(self, message):
        super().__init__("SECRET_KEY_MISMATCH", message)


def _key_file():
    """Beside the SQLite database in use (whatever the context), else ./instance/."""
    path = sqlite_file(db.obj)
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
    log.warning(
        "COMMERCE_SECRET_KEY is not set: made a key in %s (set COMMERCE_SECRET_KEY on every "
        "host that shares the database)",
        path,
    )
    return key


def secret_keys(setting: str | None) -> list[str]:
    """The keys of a ``COMMERCE_SECRET_KEY`` value, in order (commas separate them)."""
    return [part.strip() for part in str(setting or "").split(",") if part.strip()]


def _fernet_of(material):
    # any passphrase or key file content -> a 32-byte Fernet key
    digest = hashlib.sha256(b"commerce-api:" + material).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def _fernet():
    config = current_config()
    keys = tuple(secret_keys(config.get("SECRET_KEY")))
    cache_key = (keys, None if keys else _key_file())
    fernet = _cache.get(cache_key)
    if fernet is None:
        with _lock:
            materials = [k.encode() for k in keys] or [_read_or_create(cache_key[1])]
            fernet = _cache[cache_key] = MultiFernet([_fernet_of(m) for m in materials])
    return fernet


def encrypt(text: str | None) -> str | None:
    """The stored form of ``text``, encrypted with the first key (None stays None)."""
    if text is None:
        return None
    return PREFIX + _fernet().encrypt(text.encode()).decode()


def _unreadable():
    log.error(
        "a stored secret cannot be decrypted with any key of COMMERCE_SECRET_KEY: put the "
        "key it was encrypted with back (after the new one) and run `commerce-api secrets "
        "rotate`"
    )
    return SecretUnreadable(
        "A stored secret cannot be decrypted with any key of COMMERCE_SECRET_KEY "
        "(was a key changed or dropped before `commerce-api secrets rotate`?)."
    )


def decrypt(stored: str | None) -> str | None:
    """The plain text of a stored value; ``SecretUnreadable`` when no key decrypts it.

    Plain text (a value stored before encryption) is returned as it is.
    """
    if stored is None or not stored.startswith(PREFIX):
        return stored
    try:
        return _fernet().decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        raise _unreadable() from None


def reencrypt(stored: str | None) -> str | None:
    """``stored`` encrypted with the first key (plain text is encrypted; None stays None)."""
    if stored is None:
        return None
    if not stored.startswith(PREFIX):
        return encrypt(stored)
    try:
        return PREFIX + _fernet().rotate(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        raise _unreadable() from None


class EncryptedTextField(TextField):
    """Text stored encrypted (``fernet:...``); reads give the plain text back."""

    def bind(self, model: type[Model], name: str, set_attribute: bool = True) -> None:
        super().bind(model, name, set_attribute)
        FIELDS.append(self)

    def db_value(self, value: str | None) -> str | None:
        return encrypt(value)

    def python_value(self, value: str | None) -> str | None:
        return decrypt(value)


def _key_columns(model: type[Model]) -> list[str]:
    key = model._meta.primary_key
    names = key.field_names if hasattr(key, "field_names") else (key.name,)
    return [model._meta.fields[name].column_name for name in names]


def rotate_all(batch: int = 500) -> dict[str, int]:
    """Re-encrypt every stored secret (every ``EncryptedTextField`` column) with the first
    key; returns ``{"table.column": rows rewritten}``.

    Walks each table in primary-key order, one batch per transaction; a row is rewritten
    only if it still holds the value read (a ciphertext is unique), so a secret changed
    meanwhile (a webhook secret rotated) is never overwritten. Run it after putting a new
    key first in COMMERCE_SECRET_KEY; then the old keys may be dropped.
    """
    counts = {}
    p = db.param
    for field in sorted(FIELDS, key=lambda f: (f.model._meta.table_name, f.column_name)):
        name = f"{field.model._meta.table_name}.{field.column_name}"
        if name in counts:
            continue
        # the names come from the field's model (sql.table), quoted
        table, column = sql.table(field.model), sql.quote(field.column_name)
        keys = [sql.quote(key) for key in _key_columns(field.model)]
        key_list = ", ".join(keys)
        match = " AND ".join(f"{key} = {p}" for key in keys)
        select = f"SELECT {key_list}, {column} FROM {table} WHERE {column} IS NOT NULL"
        select_after = f"{select} AND ({key_list}) > ({sql.marks(len(keys))})"
        order = f" ORDER BY {key_list} LIMIT {int(batch)}"
        update = f"UPDATE {table} SET {column} = {p} WHERE {match} AND {column} = {p}"
        done, last = 0, None
        while True:
            text = select + order if last is None else select_after + order
            rows = db.execute_sql(text, last or ()).fetchall()
            if not rows:
                break
            with db.atomic():
                for row in rows:
                    value = row[-1]
                    done += db.execute_sql(update, (reencrypt(value), *row[:-1], value)).rowcount
            last = tuple(rows[-1][:-1])
        counts[name] = done
    return counts
