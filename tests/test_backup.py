"""``commerce-api backup --to`` never writes over a database, however the path is spelled,
takes paths with ``?``, ``%`` and ``#``, and says what a restore needs besides the copy
(issue 31). SQLite only (PostgreSQL: pg_dump), so on either engine's run it makes its own
SQLite database."""

import json
import os
import sqlite3
import subprocess
import sys
from urllib.parse import quote

import pytest

from tests.support.servers import ROOT

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


def run_cli(args, database, **env):
    url = f"sqlite:///{quote(str(database))}"
    environment = {k: v for k, v in os.environ.items() if k != "COMMERCE_SECRET_KEY"}
    environment.update(COMMERCE_DATABASE_URL=url, **env)
    return subprocess.run(
        [sys.executable, "-m", "commerce_api.cli", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def tables(path):
    conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A migrated SQLite database in WAL mode (as the service keeps it), with a -wal."""
    folder = tmp_path_factory.mktemp("live")
    database = folder / "commerce.db"
    done = run_cli(["init-db"], database)
    assert done.returncode == 0, done.stderr
    holder = sqlite3.connect(database)  # keeps -wal and -shm there, as a running service
    holder.execute("PRAGMA journal_mode = wal").fetchone()
    holder.execute("CREATE TABLE IF NOT EXISTS backup_probe (n INTEGER)")
    holder.commit()
    yield database
    holder.close()


def spellings(database, tmp_path):
    """Other names of the live database (or of its files)."""
    linked = tmp_path / "linked"
    linked.symlink_to(database.parent, target_is_directory=True)
    hard = tmp_path / "hard.db"
    os.link(database, hard)
    other = tmp_path / "other.db"  # another database in use
    conn = sqlite3.connect(other)
    conn.execute("PRAGMA journal_mode = wal").fetchone()
    conn.execute("CREATE TABLE t (n INTEGER)")
    conn.commit()
    conn.close()
    return {
        "double slash": "/" + str(database),
        "dot segments": str(database.parent / ".." / database.parent.name / database.name),
        "symlinked folder": str(linked / database.name),
        "hard link": str(hard),
        "its -wal": str(database) + "-wal",
        "its -shm": str(database) + "-shm",
        "another database in use": str(other),
    }


def test_backup_never_writes_over_a_database(live, tmp_path):
    before = (os.stat(live).st_ino, tables(live))
    for name, target in spellings(live, tmp_path).items():
        done = run_cli(["backup", "--to", target], live)
        assert done.returncode != 0, (name, done.stdout)
        assert "database" in done.stderr, (name, done.stderr)
        assert (os.stat(live).st_ino, tables(live)) == before, name
    # an earlier backup is replaced when asked (it is in rollback mode, nothing beside it)
    earlier = tmp_path / "nightly.db"
    for _ in range(2):
        done = run_cli(["backup", "--to", str(earlier), "--force"], live)
        assert done.returncode == 0, done.stderr
    assert tables(earlier) == before[1]


@pytest.mark.parametrize("name", ["a?b.db", "100%.db", "x#1.db", "we?ird %23 #dir/c%3F.db"])
def test_backup_and_restore_take_paths_with_special_characters(live, tmp_path, name):
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    done = run_cli(["backup", "--to", str(target), "--json"], live)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["backup"] == str(target)
    assert tables(target) == tables(live)
    # and restored to a database whose own path has them too
    restored = tmp_path / "re?stored#" / "100%.db"
    done = run_cli(["restore", "--from", str(target)], restored)
    assert done.returncode == 0, done.stderr
    assert tables(restored) == tables(live)
    done = run_cli(["backup", "--to", str(tmp_path / "again.db")], restored)
    assert done.returncode == 0, done.stderr


def test_backup_says_that_the_secret_key_is_needed(live, tmp_path):
    done = run_cli(["backup", "--to", str(tmp_path / "copy.db"), "--json"], live)
    assert done.returncode == 0, done.stderr
    secret_key = json.loads(done.stdout)["secret_key"]
    assert secret_key["file"] == str(live.parent / "secret.key")
    assert "secret.key" in secret_key["note"]
    done = run_cli(["backup", "--to", str(tmp_path / "copy.db"), "--force"], live)
    assert "secret.key" in done.stdout and "cannot read" in done.stdout
    done = run_cli(
        ["backup", "--to", str(tmp_path / "copy.db"), "--force"], live, COMMERCE_SECRET_KEY="k1"
    )
    assert "COMMERCE_SECRET_KEY" in done.stdout
