"""Secrets at rest: Fernet (AES-128-CBC + HMAC-SHA256) with a key from COMMERCE_SECRET_KEY.

Without ``COMMERCE_SECRET_KEY`` a random key is made once and kept in a ``secret.key`` file
beside the SQLite database (or in ``./instance/`` on PostgreSQL), readable by its owner
only. Several hosts sharing one PostgreSQL database must all set the same
``COMMERCE_SECRET_KEY``.
"""

import base64
import hashlib
import logging
import os
import threading

from cryptography.fernet import Fernet, InvalidToken
from peewee import TextField

from .config import current_config
from .db import db, sqlite_file

log = logging.getLogger("commerce_api.crypto")

PREFIX = "fernet:"  # what marks a stored value as encrypted
_lock = threading.Lock()
_cache = {}  # (secret key setting, key file) -> Fernet


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


def _fernet():
    config = current_config()
    secret = config.get("SECRET_KEY")
    cache_key = (secret, None if secret else _key_file())
    fernet = _cache.get(cache_key)
    if fernet is None:
        with _lock:
            material = secret.encode() if secret else _read_or_create(cache_key[1])
            # any passphrase or key file content -> a 32-byte Fernet key
            digest = hashlib.sha256(b"commerce-api:" + material).digest()
            fernet = _cache[cache_key] = Fernet(base64.urlsafe_b64encode(digest))
    return fernet


def encrypt(text):
    """The stored form of ``text`` (None stays None)."""
    if text is None:
        return None
    return PREFIX + _fernet().encrypt(text.encode()).decode()


def decrypt(stored):
    """The plain text of a stored value; None when it cannot be decrypted (logged).

    Plain text (a value stored before encryption) is returned as it is.
    """
    if stored is None or not stored.startswith(PREFIX):
        return stored
    try:
        return _fernet().decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        log.error("a stored secret cannot be decrypted: was COMMERCE_SECRET_KEY changed?")
        return None


class EncryptedTextField(TextField):
    """Text stored encrypted (``fernet:...``); reads give the plain text back."""

    def db_value(self, value):
        return encrypt(value)

    def python_value(self, value):
        return decrypt(value)
