"""The commerce-api command as an operator runs it, in a process of its own from a folder of
its own: the demo from any folder, and a backup that never replaces a file unasked."""

import json
import os
import sqlite3

import pytest

from tests.support.servers import ROOT, run_cli

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


def _env(**config):
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_")}
    env.update({f"COMMERCE_{k}": str(v) for k, v in config.items()})
    return env  # no COMMERCE_DATABASE_URL: the default, ./instance/commerce.db


def _tree(folder):
    return sorted(
        os.path.relpath(os.path.join(top, name), folder)
        for top, _, names in os.walk(folder)
        for name in names
    )


def test_demo_from_another_folder_seeds_a_database_there(tmp_path):
    before = _tree(os.path.join(ROOT, "instance")) if os.path.isdir(ROOT + "/instance") else []
    done = run_cli(["demo", "--json"], _env(), cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    saved = json.loads(done.stdout)
    # the database and what belongs with it, nothing else (no rate-limit counter file)
    assert _tree(tmp_path) == ["instance/commerce.db", "instance/demo-credentials.json"]
    conn = sqlite3.connect(tmp_path / "instance" / "commerce.db")
    try:
        tenants = conn.execute("SELECT id FROM tenant").fetchall()
        products = conn.execute("SELECT COUNT(*) FROM product").fetchone()[0]
    finally:
        conn.close()
    assert tenants == [(saved["tenant_id"],)] and products >= 10
    with open(tmp_path / "instance" / "demo-credentials.json") as handle:
        assert json.load(handle) == saved
    # the checkout's own instance folder (the package's) was left alone
    after = _tree(os.path.join(ROOT, "instance")) if os.path.isdir(ROOT + "/instance") else []
    assert after == before

    again = run_cli(["demo"], _env(), cwd=tmp_path, timeout=180)
    assert again.returncode == 0, again.stderr
    assert "already seeded" in again.stdout and saved["api_key"] in again.stdout
    listed = run_cli(["tenants", "list", "--json"], _env(), cwd=tmp_path)
    assert [row["id"] for row in json.loads(listed.stdout)] == [saved["tenant_id"]]


def test_backup_never_replaces_a_file_unasked_and_names_the_secret_key(tmp_path):
    url = f"sqlite:///{tmp_path / 'db' / 'commerce.db'}"
    assert run_cli(["init-db"], _env(DATABASE_URL=url), cwd=tmp_path).returncode == 0
    made = run_cli(["tenants", "create", "--name", "Shop"], _env(DATABASE_URL=url), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    key_file = tmp_path / "db" / "secret.key"

    target = tmp_path / "copy.db"
    first = run_cli(["backup", "--to", str(target)], _env(DATABASE_URL=url), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert str(key_file) in first.stdout and "keep a copy of it with the backup" in first.stdout

    target.write_bytes(b"last week's backup")
    refused = run_cli(["backup", "--to", str(target)], _env(DATABASE_URL=url), cwd=tmp_path)
    assert refused.returncode == 1
    assert "exists" in refused.stderr and "--force" in refused.stderr
    assert refused.stdout == ""
    assert target.read_bytes() == b"last week's backup"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.db", "db"]  # no partial copy

    key_file.write_bytes(b"a key")  # the key a stored secret would have made
    forced = run_cli(
        ["backup", "--to", str(target), "--force", "--json"], _env(DATABASE_URL=url), cwd=tmp_path
    )
    assert forced.returncode == 0, forced.stderr
    payload = json.loads(forced.stdout)
    assert payload["secret_key"]["file"] == str(key_file)
    assert payload["bytes"] == target.stat().st_size
    conn = sqlite3.connect(target)
    try:
        assert conn.execute("SELECT name FROM tenant").fetchall() == [("Shop",)]
    finally:
        conn.close()
    plain = run_cli(
        ["backup", "--to", str(target), "--force"], _env(DATABASE_URL=url), cwd=tmp_path
    )
    assert str(key_file) in plain.stdout and "keep a copy of it with the backup" in plain.stdout

    # with COMMERCE_SECRET_KEY set, the variable is what to keep
    env = _env(DATABASE_URL=url, SECRET_KEY="k1")
    keyed = run_cli(["backup", "--to", str(tmp_path / "other.db")], env, cwd=tmp_path)
    assert keyed.returncode == 0, keyed.stderr
    assert "COMMERCE_SECRET_KEY" in keyed.stdout and str(key_file) not in keyed.stdout
