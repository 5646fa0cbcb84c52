"""The two reference apps of the benchmark, served by gunicorn like the real one.

- ``bare_wsgi``: a WSGI callable without Flask returning a fixed JSON body (case e).
- ``flask_sqlite``: a bare Flask app doing the same product lookup as
  ``GET /api/products/:sku`` (tenant + sku, through the same unique index) with the stdlib
  ``sqlite3`` module, one connection per worker process (case f).

``BENCH_DB_PATH`` names the SQLite file (the benchmark's database).
"""

import json
import os
import sqlite3
import threading

from flask import Flask, g, jsonify, request

_BODY = json.dumps({"status": "ok", "version": "bare", "timestamp": "2026-01-01T00:00:00.000Z"})
_BODY = _BODY.encode()
_HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(_BODY)))]


def bare_wsgi(environ, start_response):
    start_response("200 OK", list(_HEADERS))
    return [_BODY]


flask_sqlite = Flask(__name__)
_local = threading.local()


def _connection():
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(os.environ["BENCH_DB_PATH"], check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 15000")
        conn.execute("PRAGMA cache_size = -32000")
        conn.row_factory = sqlite3.Row
        _local.conn = conn
    return conn


@flask_sqlite.get("/api/health")
def health():
    return jsonify(status="ok")


@flask_sqlite.get("/api/products/<sku>")
def product(sku):
    g.tenant_id = request.headers.get("X-Tenant-ID")
    row = (
        _connection()
        .execute("SELECT * FROM product WHERE tenant_id = ? AND sku = ?", (g.tenant_id, sku))
        .fetchone()
    )
    if row is None:
        return jsonify(error="not found"), 404
    return jsonify(data=dict(row))
