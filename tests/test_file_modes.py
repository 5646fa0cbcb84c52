"""SQLite database files are created readable by their owner only (0600), like
``secret.key``, whatever the umask (issue 31): the database, its -wal and -shm, and the
rate-limit counters' own file beside it."""

import os
import stat

import pytest

from commerce_api.db import db
from tests.support import dbutil
from tests.support.factories import headers_for


@pytest.fixture
def restore_db(app):
    yield
    db.initialize(app.extensions["commerce"]["database"])


@pytest.fixture
def open_umask():
    previous = os.umask(0o022)  # what most services run with: new files 0644
    yield
    os.umask(previous)


def test_sqlite_files_are_created_0600(make_app, restore_db, open_umask, tmp_path):
    url = f"sqlite:///{tmp_path / 'data' / 'commerce.db'}"
    dbutil.migrate(url)
    app = make_app(DATABASE_URL=url, RATE_LIMIT_ENABLED=True)
    with app.app_context():
        headers = headers_for()
    assert app.test_client().get("/api/products", headers=headers).status_code == 200
    files = sorted(p for p in (tmp_path / "data").iterdir() if p.is_file())
    names = {p.name for p in files}
    assert {"commerce.db", "commerce.db-wal", "commerce.db-shm"} <= names
    assert any(name.startswith("commerce.db-ratelimit") for name in names), names
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in files}
    assert {name: mode for name, mode in modes.items() if mode & 0o077} == {}
    app.extensions["commerce"]["database"].close()
