"""A SQLite database file deleted or replaced under a running process (issue 31): the
process notices at its next transaction (or within a second), never writes into the old
file, never creates an empty one, and uses the file put back at the path."""

import contextlib
import os
import sqlite3
import time

import pytest

from commerce_api import db_errors
from commerce_api.db import FILE_CHECK_SECONDS, DatabaseFileMissing, db, sqlite_file
from commerce_api.products.models import Product
from tests.support import dbutil
from tests.support.factories import create_product

pytestmark = pytest.mark.skipif(
    dbutil.is_postgres_url(dbutil.BASE_URL), reason="a SQLite file's identity"
)


def copy_of(path, target):
    source, copy = sqlite3.connect(path), sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()


def remove_database(path):
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


@pytest.fixture
def path(app):
    return sqlite_file(app.extensions["commerce"]["database"])


def test_a_missing_file_is_refused_not_created_then_used_when_back(
    app, client, headers, path, tmp_path
):
    create_product(client, headers, sku="KEPT-1")
    backup = str(tmp_path / "backup.db")
    copy_of(path, backup)
    assert client.get("/api/products/KEPT-1", headers=headers).status_code == 200
    remove_database(path)
    # a write: refused at its BEGIN (nothing reaches the deleted file)
    response = client.post("/api/products", json={"sku": "LOST-1", "title": "x"}, headers=headers)
    assert response.status_code == 503, response.get_json()
    assert response.get_json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert response.headers.get("Retry-After")
    # reads too, and readiness says why
    assert client.get("/api/products/KEPT-1", headers=headers).status_code == 503
    ready = client.get("/api/health/ready")
    assert ready.status_code == 503
    assert "missing" in ready.get_json()["checks"]["database"]["error"]
    with pytest.raises(DatabaseFileMissing) as raised:
        db.execute_sql("SELECT 1")
    assert db_errors.classify(raised.value) == db_errors.UNAVAILABLE
    assert not os.path.exists(path)  # no empty database made in its place
    os.rename(backup, path)  # the backup moved into place
    assert client.get("/api/products/KEPT-1", headers=headers).status_code == 200
    response = client.post("/api/products", json={"sku": "NEW-1", "title": "x"}, headers=headers)
    assert response.status_code == 201, response.get_json()
    assert client.get("/api/health/ready").status_code == 200


def test_a_replaced_file_is_opened_anew(app, client, headers, path, tmp_path):
    create_product(client, headers, sku="OLD-1")
    replacement = str(tmp_path / "replacement.db")
    copy_of(path, replacement)
    other = sqlite3.connect(replacement)
    other.execute("UPDATE product SET title = 'From the replacement' WHERE sku = 'OLD-1'")
    other.commit()
    other.close()
    for suffix in ("-wal", "-shm"):  # never beside another database's WAL (README)
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)
    os.replace(replacement, path)
    # the next transaction opens the file now at the path; what it writes is there
    response = client.post("/api/products", json={"sku": "NEW-1", "title": "x"}, headers=headers)
    assert response.status_code == 201, response.get_json()
    reader = sqlite3.connect(path)
    try:
        skus = {row[0] for row in reader.execute("SELECT sku FROM product")}
    finally:
        reader.close()
    assert {"OLD-1", "NEW-1"} <= skus
    time.sleep(FILE_CHECK_SECONDS + 0.1)  # reads outside a transaction: within a second
    shown = client.get("/api/products/OLD-1", headers=headers).get_json()["data"]
    assert shown["title"] == "From the replacement"
    assert Product.select().where(Product.sku == "NEW-1").exists()
