"""The migrations stand on their own (STYLE.md): each one defines the tables it touches and
imports no live model, so a later change to a model cannot change (or break) an old
migration. A fresh database migrated today must get exactly the schema it got before the
migrations were frozen: ``fixtures/schema_<engine>.json`` (next to this file) holds that
schema, captured from the migrations as they were when they still created tables from the
live models.

To capture a snapshot again (only for a new migration, never to make this test pass after
changing an old one): ``python -m tests.migrations.test_frozen sqlite://`` or with a
``postgresql://`` URL of a server (a throwaway database is made and dropped there).
"""

import ast
import json
import pathlib
import sys

import pytest

from commerce_api.db import is_postgres, make_database
from commerce_api.migrations import DIRECTORY, upgrade
from tests.support import dbutil
from tests.support.dbutil import BASE_URL

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
MIGRATIONS = sorted(pathlib.Path(DIRECTORY).glob("[0-9]*.py"))

# What a migration may import from the package: helpers with no model in them.
ALLOWED_IMPORTS = {
    "commerce_api.db": {"is_postgres"},  # the engine of the database migrated: no model
    "commerce_api.migrations.frozen": {"Frozen", "stub", "SECRET_PREFIX", "SecretBox"},
}
# The migrations' shared base and stubs obey the same rule as a migration.
CHECKED = [*MIGRATIONS, pathlib.Path(DIRECTORY) / "frozen.py"]


def _sqlite_schema(database):
    objects = database.execute_sql(
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    ).fetchall()
    columns = {}
    for kind, name, _, _ in objects:
        if kind == "table":
            rows = database.execute_sql(f'PRAGMA table_info("{name}")').fetchall()
            columns[name] = [
                {"name": r[1], "type": r[2], "notnull": r[3], "default": r[4], "pk": r[5]}
                for r in rows
            ]
    return {
        "objects": [
            {"type": kind, "name": name, "table": table, "sql": sql}
            for kind, name, table, sql in objects
        ],
        "columns": columns,
    }


def _rows(database, sql):
    cursor = database.execute_sql(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _postgres_schema(database):
    return {
        "tables": _rows(
            database,
            "SELECT c.relname AS name, c.relkind AS kind, c.relpersistence AS persistence,"
            " c.reloptions::text AS options FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'S', 'v', 'm')"
            " ORDER BY c.relname",
        ),
        "columns": _rows(
            database,
            "SELECT table_name, column_name, ordinal_position, data_type,"
            " character_maximum_length, numeric_precision, numeric_scale, is_nullable,"
            " column_default FROM information_schema.columns WHERE table_schema = 'public'"
            " ORDER BY table_name, ordinal_position",
        ),
        "indexes": _rows(
            database,
            "SELECT tablename, indexname, indexdef FROM pg_indexes"
            " WHERE schemaname = 'public' ORDER BY tablename, indexname",
        ),
        "constraints": _rows(
            database,
            "SELECT c.conrelid::regclass::text AS table_name, c.conname AS name,"
            " c.contype AS kind, pg_get_constraintdef(c.oid) AS definition"
            " FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace"
            " WHERE n.nspname = 'public' ORDER BY 1, 2",
        ),
        "triggers": _rows(
            database,
            "SELECT t.tgrelid::regclass::text AS table_name, t.tgname AS name,"
            " pg_get_triggerdef(t.oid) AS definition FROM pg_trigger t"
            " WHERE NOT t.tgisinternal ORDER BY 1, 2",
        ),
        "functions": _rows(
            database,
            "SELECT p.proname AS name, pg_get_functiondef(p.oid) AS definition"
            " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = 'public' ORDER BY 1",
        ),
    }


def schema_of(database):
    """Everything a migration decides about a database, in a stable order."""
    if is_postgres(database):
        return _postgres_schema(database)
    return _sqlite_schema(database)


def migrated_schema(base_url, tmp_dir):
    """Migrate a new, empty database and return its schema (the database is dropped)."""
    url = dbutil.create_database(base_url, tmp_dir)
    database = make_database(url)
    try:
        with database.connection_context():
            upgrade(database)
            return schema_of(database)
    finally:
        if not database.is_closed():
            database.close()
        if hasattr(database, "close_all"):
            database.close_all()
        dbutil.drop_database(base_url, url)


def dump(schema):
    """The snapshot as JSON with one object (a row) per line, for readable diffs."""

    def rows(items, indent):
        return ",\n".join(indent + json.dumps(item, sort_keys=True) for item in items)

    parts = []
    for key, value in sorted(schema.items()):
        if isinstance(value, dict):
            inner = ",\n".join(
                f"  {json.dumps(name)}: [\n{rows(items, '   ')}\n  ]"
                for name, items in sorted(value.items())
            )
            parts.append(f" {json.dumps(key)}: {{\n{inner}\n }}")
        else:
            parts.append(f" {json.dumps(key)}: [\n{rows(value, '  ')}\n ]")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def fixture_path(base_url):
    engine = "postgresql" if dbutil.is_postgres_url(base_url) else "sqlite"
    return FIXTURES / f"schema_{engine}.json"


ENGINES = [
    pytest.param("sqlite://", id="sqlite"),
    pytest.param(
        BASE_URL,
        id="postgresql",
        marks=pytest.mark.skipif(
            not dbutil.is_postgres_url(BASE_URL),
            reason="COMMERCE_DATABASE_URL names no PostgreSQL server",
        ),
    ),
]


@pytest.mark.parametrize("base_url", ENGINES)
def test_a_fresh_database_gets_the_snapshot_schema(base_url, tmp_path):
    expected = json.loads(fixture_path(base_url).read_text())
    actual = json.loads(json.dumps(migrated_schema(base_url, str(tmp_path))))
    for part in expected:
        assert actual[part] == expected[part], part
    assert actual.keys() == expected.keys()


def _imports(tree):
    """(module, names) of every import in a module, those inside functions included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, set()
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = "commerce_api." + module  # relative to the package (never used)
            yield module, {alias.name for alias in node.names}


@pytest.mark.parametrize("path", CHECKED, ids=[p.stem for p in CHECKED])
def test_a_migration_imports_no_live_model(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for module, names in _imports(tree):
        if module == "commerce_api" or module.startswith("commerce_api."):
            assert module in ALLOWED_IMPORTS, f"{path.name} imports {module}"
            assert names and names <= ALLOWED_IMPORTS[module], f"{path.name}: {names}"


def test_the_import_check_catches_a_live_model():
    tree = ast.parse(
        "def up(migrator, db):\n"
        "    from commerce_api.jobs.models import Job\n"
        "    import commerce_api.orders.models\n"
        "    from ..products import models\n"
    )
    modules = [module for module, _ in _imports(tree)]
    assert modules == [
        "commerce_api.jobs.models",
        "commerce_api.orders.models",
        "commerce_api.products",
    ]
    assert not any(module in ALLOWED_IMPORTS for module in modules)


if __name__ == "__main__":
    import tempfile

    base = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        schema = migrated_schema(base, tmp)
    fixture_path(base).write_text(dump(json.loads(json.dumps(schema))))
    print(fixture_path(base))
