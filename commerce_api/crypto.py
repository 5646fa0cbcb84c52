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
import time
from dataclasses import dataclass

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
KEY_CHECK_SAMPLE = 20  # stored secrets per column tried by ``check_keys`` (the newest)
KEY_CHECK_SECONDS = 60.0  # how long a process trusts its last ``check_keys``
_checks = {}  # (keys, key file) -> (monotonic time, KeyCheck)


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
    """The stored form of ``text``, encrypted with the first key (None stays None);
    ``SecretUnreadable`` when the keys read none of the stored secrets (nothing is ever
    written with a key that reads nothing)."""
    if text is None:
        return None
    require_readable_keys()
    return PREFIX + _fernet().encrypt(text.encode()).decode()


@dataclass(frozen=True)
class KeyCheck:
    """The configured keys tried on the newest stored secrets of every encrypted column."""

    sampled: int  # encrypted values tried
    readable: int  # of which a key decrypted

    @property
    def reads_none(self) -> bool:
        """Secrets are stored and no key reads any of them: a wrong COMMERCE_SECRET_KEY."""
        return self.sampled > 0 and self.readable == 0

    def message(self) -> str:
        return (
            f"COMMERCE_SECRET_KEY decrypts none of the {self.sampled} newest stored secrets:"
            " set the key(s) they were written with (the same on every host)."
        )


def _cache_key():
    keys = tuple(secret_keys(current_config().get("SECRET_KEY")))
    return keys, None if keys else _key_file()


def check_keys(sample: int = KEY_CHECK_SAMPLE) -> KeyCheck:
    """Try the configured keys on the ``sample`` newest stored secrets of each encrypted
    column (read-only; a table or column not made yet counts as empty)."""
    fernet = _fernet()
    sampled = readable = 0
    for table, column, keys in _encrypted_columns():
        order = ", ".join(f"{key} DESC" for key in keys)
        rows = db.execute_sql(
            f"SELECT {column} FROM {table} WHERE {column} LIKE {db.param}"
            f" ORDER BY {order} LIMIT {int(sample)}",
            (PREFIX + "%",),
        ).fetchall()
        for (value,) in rows:
            sampled += 1
            try:
                fernet.decrypt(value[len(PREFIX) :].encode())
            except InvalidToken:
                continue
            readable += 1
    return KeyCheck(sampled, readable)


def _encrypted_columns():
    """(quoted table, quoted column, quoted key columns) of every encrypted column that
    exists in the database."""
    seen = set()
    for field in FIELDS:
        name = (field.model._meta.table_name, field.column_name)
        if name in seen or not db.table_exists(name[0]):
            continue
        seen.add(name)
        if field.column_name not in {c.name for c in db.get_columns(name[0])}:
            continue
        keys = [sql.quote(key) for key in _key_columns(field.model)]
        yield sql.table(field.model), sql.quote(field.column_name), keys


def key_check(max_age: float = KEY_CHECK_SECONDS) -> KeyCheck:
    """``check_keys`` of the configured keys: a passing check is trusted for ``max_age``
    seconds per process; a failing one is done again each time (the operator may put the
    key back, or rotate, at any moment)."""
    cache_key = _cache_key()
    kept = _checks.get(cache_key)
    if kept is not None and time.monotonic() - kept[0] < max_age:
        return kept[1]
    result = check_keys()
    if result.reads_none:
        _checks.pop(cache_key, None)
    else:
        _checks[cache_key] = (time.monotonic(), result)
    return result


def require_readable_keys() -> None:
    """``SecretUnreadable`` when the configured keys read none of the stored secrets."""
    result = key_check()
    if result.reads_none:
        log.error("%s Refusing to write a secret with them.", result.message())
        raise SecretUnreadable(result.message() + " No secret is written with it.")


def _unreadable(quiet=False):
    if not quiet:
        log.error(
            "a stored secret cannot be decrypted with any key of COMMERCE_SECRET_KEY: put"
            " the key it was encrypted with back (after the new one) and run `commerce-api"
            " secrets rotate`"
        )
    return SecretUnreadable(
        "A stored secret cannot be decrypted with any key of COMMERCE_SECRET_KEY "
        "(was a key changed or dropped before `commerce-api secrets rotate`?)."
    )


def decrypt(stored: str | None, quiet: bool = False) -> str | None:
    """The plain text of a stored value; ``SecretUnreadable`` when no key decrypts it
    (logged unless ``quiet``: the caller reports it where the secret is used).

    Plain text (a value stored before encryption) is returned as it is.
    """
    if stored is None or not stored.startswith(PREFIX):
        return stored
    try:
        return _fernet().decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        raise _unreadable(quiet) from None


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


class UnreadableSecret:
    """A stored secret that no configured key decrypts, as a row's attribute.

    The row still reads (a list that needs no secret answers; one bad row never stops a
    batch of others); using the secret raises ``SecretUnreadable`` where it is used (its
    own endpoint or connection fails, visibly); saving the row writes the stored form back
    as it was. It is true (a secret is stored) and never shows its text.
    """

    __slots__ = ("stored",)

    def __init__(self, stored: str) -> None:
        self.stored = stored

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "<unreadable secret>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnreadableSecret) and other.stored == self.stored

    def __hash__(self) -> int:
        return hash(self.stored)

    def reveal(self) -> str:
        raise _unreadable()

    def __str__(self) -> str:
        raise _unreadable()

    def __format__(self, spec: str) -> str:
        raise _unreadable()

    def encode(self, *args: object) -> bytes:
        raise _unreadable()


def readable(value: "str | UnreadableSecret | None") -> str | None:
    """The plain text of a secret read from a row; ``SecretUnreadable`` when no key
    decrypts it."""
    if isinstance(value, UnreadableSecret):
        return value.reveal()
    return value


class EncryptedTextField(TextField):
    """Text stored encrypted (``fernet:...``); reads give the plain text back, or an
    ``UnreadableSecret`` when no key decrypts it (the row still reads)."""

    def bind(self, model: type[Model], name: str, set_attribute: bool = True) -> None:
        super().bind(model, name, set_attribute)
        FIELDS.append(self)

    def db_value(self, value: "str | UnreadableSecret | None") -> str | None:
        if isinstance(value, UnreadableSecret):
            return value.stored  # never re-encrypted with keys that cannot read it
        return encrypt(value)

    def python_value(self, value: str | None) -> "str | UnreadableSecret | None":
        try:
            return decrypt(value, quiet=True)
        except SecretUnreadable:
            return UnreadableSecret(value)


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
