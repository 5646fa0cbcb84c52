"""Test databases: a throwaway SQLite file, or a throwaway database on the PostgreSQL server."""

import os
import uuid
from urllib.parse import urlparse, urlunparse

import psycopg2

from commerce_api.db import db, init_database
from commerce_api.migrations import upgrade

# the server the tests make their databases on: COMMERCE_DATABASE_URL, else SQLite files
BASE_URL = os.environ.get("COMMERCE_DATABASE_URL", "sqlite://")


def is_postgres_url(url):
    return url.startswith(("postgres://", "postgresql://"))


def create_database(base_url, tmp_dir):
    """Return a URL of a new empty database for this test session."""
    if not is_postgres_url(base_url):
        return f"sqlite:///{os.path.join(tmp_dir, 'test.db')}"
    name = f"commerce_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    _admin(base_url, f'CREATE DATABASE "{name}"')
    # a throwaway database: a commit need not wait for its WAL to reach the disk (a crash
    # of the PostgreSQL server could lose the last commits; a killed client loses nothing),
    # which a suite of small transactions otherwise spends most of its time on
    _admin(base_url, f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    parsed = urlparse(base_url)
    return urlunparse(parsed._replace(path="/" + name))


def drop_database(base_url, url):
    if not is_postgres_url(url):
        return
    name = urlparse(url).path.lstrip("/")
    _admin(
        base_url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = '{name}' AND pid <> pg_backend_pid()",
    )
    _admin(base_url, f'DROP DATABASE IF EXISTS "{name}"')


def drop_app_database(app, base_url, url):
    """Close the connections of an app built on a throwaway database, then drop it."""
    database = app.extensions["commerce"]["database"]
    if not database.is_closed():
        database.close()
    if hasattr(database, "close_all"):
        database.close_all()
    drop_database(base_url, url)


def _admin(base_url, sql):
    parsed = urlparse(base_url)
    conn = psycopg2.connect(
        dbname=parsed.path.lstrip("/") or "postgres",
        user=parsed.username,
        password=parsed.password,
        host=parsed.hostname,
        port=parsed.port,
    )
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
    finally:
        conn.close()


def migrate(url):
    database = init_database(url)
    with database.connection_context():
        upgrade(database)
    return database


def truncate_all():
    """Empty every table but the migration history (fast per-test isolation)."""
    tables = [t for t in db.get_tables() if t != "schema_migration"]
    # the count triggers (migration 0015) write list_count while rows go: empty it last
    tables.sort(key=lambda table: table.startswith("list_count"))
    if not tables:
        return
    if db.obj.__class__.__name__.endswith("PostgresqlDatabase"):
        # DELETE of a few rows is far cheaper than TRUNCATE of ~20 tables (which takes
        # exclusive locks and rewrites files); replica mode skips the foreign-key triggers.
        with db.atomic():
            db.execute_sql("SET LOCAL session_replication_role = replica")
            for table in tables:
                db.execute_sql(f'DELETE FROM "{table}"')
    else:
        db.execute_sql("PRAGMA foreign_keys = OFF")
        try:
            with db.atomic():
                for table in tables:
                    db.execute_sql(f'DELETE FROM "{table}"')
        finally:
            db.execute_sql("PRAGMA foreign_keys = ON")
