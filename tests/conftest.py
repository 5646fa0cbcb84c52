"""Fixtures: one database per session (SQLite, or PostgreSQL when COMMERCE_DATABASE_URL
names one), emptied before each test; ``app``, ``client``, ``runner``, ``tenant``, ``headers``.
"""

import inspect
import re

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from commerce_api import create_app
from commerce_api.auth import middleware
from commerce_api.errors import UNDECLARED
from tests.support import dbutil
from tests.support.auth_support import JWT_AUDIENCE, JWT_ISSUER
from tests.support.dbutil import BASE_URL
from tests.support.desired_state_guard import desired_state_guard  # noqa: F401 (autouse)
from tests.support.factories import auth_headers, make_key, make_tenant


@pytest.fixture(autouse=True)
def declared_errors():
    """A function declared ``@raises`` that raised a code it does not declare fails the test
    (``commerce_api/errors.py``): a view's documented codes come from those declarations."""
    UNDECLARED.clear()
    yield
    found, UNDECLARED[:] = list(UNDECLARED), []
    assert not found, "undeclared error codes raised: " + "; ".join(dict.fromkeys(found))


@pytest.fixture(scope="session")
def jwt_keys(tmp_path_factory):
    """An RSA and an EC key pair; both public keys in one PEM file, as an operator would."""
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    path = tmp_path_factory.mktemp("jwt") / "public.pem"
    pems = b"".join(
        k.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        for k in (rsa_key, ec_key)
    )
    path.write_bytes(pems)
    return {"rsa": rsa_key, "ec": ec_key, "public_file": str(path)}


@pytest.fixture(scope="session")
def database_url(tmp_path_factory):
    url = dbutil.create_database(BASE_URL, str(tmp_path_factory.mktemp("db")))
    dbutil.migrate(url)
    yield url
    from commerce_api.db import db

    if not db.is_closed():
        db.close()
    if dbutil.is_postgres_url(url):
        db.obj.close_all()
    dbutil.drop_database(BASE_URL, url)


@pytest.fixture(scope="session")
def base_config(database_url, jwt_keys):
    return {
        "DATABASE_URL": database_url,
        "JWT_PUBLIC_KEY_FILE": jwt_keys["public_file"],
        "JWT_ISSUER": JWT_ISSUER,
        "JWT_AUDIENCE": JWT_AUDIENCE,
        "RATE_LIMIT_ENABLED": False,
        "EXTRA_TASK_MODULES": "tests.support.job_types",
        "TESTING": True,
    }


@pytest.fixture(scope="session")
def _session_app(base_config):
    return create_app(base_config)


@pytest.fixture
def app(_session_app):
    """The app, on an emptied database, with per-process caches cleared."""
    from commerce_api.db import db

    db.initialize(_session_app.extensions["commerce"]["database"])
    with db.connection_context():
        dbutil.truncate_all()
    middleware.key_cache.clear()
    yield _session_app


@pytest.fixture
def make_app(base_config):
    """Build an app with extra configuration (rebinds the database proxy)."""
    apps = []

    def factory(**overrides):
        built = create_app({**base_config, **overrides})
        apps.append(built)
        return built

    yield factory


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def tenant(app):
    return make_tenant()


@pytest.fixture
def headers(tenant):
    """Headers of an all-scopes key on ``tenant``."""
    _, secret = make_key(tenant)
    return auth_headers(tenant, secret)


# Collection: engine-free tests checked, slow modules first ---------------------------------

# what an engine-free test may not use: the test database, or the engine the run is given
ENGINE_SIGNS = ("database_url",)
ENGINE_WORDS = re.compile(r"\bBASE_URL\b|\bis_postgres_url\(")


def pytest_collection_modifyitems(config, items):
    """``engine_free`` tests (the same on either engine: the PostgreSQL pass of ``.ci/run``
    leaves them to the SQLite pass) may use neither the test database nor the engine of the
    run; then the modules holding ``slow`` tests are put first, so that pytest-xdist starts
    the longest tests at once rather than at the end of the run (collection order otherwise
    kept: a module's tests stay together, for its module-scoped fixtures)."""
    sources = {}
    for item in items:
        if item.get_closest_marker("engine_free") is None:
            continue
        used = [name for name in ENGINE_SIGNS if name in item.fixturenames]
        module = item.module
        if module not in sources:
            sources[module] = inspect.getsource(module)
        words = ENGINE_WORDS.findall(sources[module])
        if used or words:
            raise pytest.UsageError(
                f"{item.nodeid} is marked engine_free but uses {used + words}: "
                "a test of the engine runs on both passes"
            )
    slow_modules = {item.module for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.module not in slow_modules)
