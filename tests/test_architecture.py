"""Which domain may know which (STYLE.md): imports run from higher layers to lower ones only.

Every module of ``commerce_api`` is parsed with ``ast``; every import counts, the ones
inside functions included (a lazy import is still an arrow).
"""

import ast
import pathlib
import re
import textwrap

import pytest

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "commerce_api"

# Lowest first. A module may import modules of its own layer or of lower layers.
LAYERS = (
    (
        "ground",
        (
            "db",
            "ids",
            "timeutil",
            "errors",
            "config",
            "pagination",
            "totals",
            "netguard",
            "crypto",
            "filelock",
            "checkpoint",
            "db_errors",
            "loophealth",
            "claims",
            "sendloop",
            "shapes",
            "sql",
            "leases",
            "retry_after",
        ),
    ),
    ("auth", ("auth",)),
    ("events", ("events",)),
    ("jobs", ("jobs",)),  # queue, worker, registry: knows no domain
    ("products", ("products",)),
    ("inventory", ("inventory",)),
    ("transfers", ("transfers",)),  # knows inventory, products
    ("marketplaces", ("marketplaces",)),
    ("orders", ("orders",)),
    ("pricing", ("pricing",)),
    ("webhooks", ("webhooks",)),
    ("analysis", ("analysis",)),
    ("files", ("files",)),  # imports and exports: know the domains they read and write
    # wires the domains to the outside
    (
        "top",
        (
            "http",
            "health",
            "cli",
            "cli_output",
            "demo",
            "serve",
            "tasks",
            "migrations",
            "schema_guard",
            "backup",
            "console",
        ),
    ),
)
RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}
TOP = len(LAYERS) - 1
# A domain's own edges to the outside are part of the top layer.
EDGE_MODULES = {"routes", "commands", "demo"}
# The web layer's marshmallow vocabulary (list arguments, ``meta``, strict numbers; no
# Flask) that a domain's request and response schemas build on.
SCHEMA_VOCABULARY = {"commerce_api.http.lists", "commerce_api.http.schemas"}


def module_name(path, root):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module):
    """The rank of ``commerce_api.<first>[.<rest>]``."""
    parts = module.split(".")
    if len(parts) == 1:
        return TOP  # the package itself: the app factory
    if len(parts) >= 3 and parts[-1] in EDGE_MODULES:
        return TOP
    first = parts[1]
    if first not in RANK:
        raise AssertionError(f"{module}: {first!r} is not in the layer map; add it")
    return RANK[first]


def imports_of(path, module, is_package):
    """Every ``commerce_api`` module ``path`` imports (``(target, line)``), at any depth."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base)
                if node.module:
                    yield f"{prefix}.{node.module}", node.lineno
                else:
                    for alias in node.names:
                        yield f"{prefix}.{alias.name}", node.lineno
            else:
                yield node.module, node.lineno


def back_edges(root):
    """``module:line imports target`` for each import that climbs a layer."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        source = layer_of(module)
        is_package = path.name == "__init__.py"
        for target, line in imports_of(path, module, is_package):
            if not target or target.split(".")[0] != root.name:
                continue
            if target.count(".") == 1 and target.split(".")[1] not in RANK:
                target = root.name  # ``from commerce_api import create_app``: the package
            if target in SCHEMA_VOCABULARY and module.endswith(".schemas"):
                continue
            if layer_of(target) > source:
                found.append(f"{module}:{line} imports {target}")
    return found


def test_no_module_imports_a_higher_layer():
    assert back_edges(PACKAGE) == []


def test_every_package_has_a_place_in_the_map():
    for path in PACKAGE.iterdir():
        if path.name.startswith(("_", ".")) or path.suffix not in ("", ".py"):
            continue
        layer_of(f"commerce_api.{path.stem}")  # raises for a package the map misses


def test_no_module_is_over_600_lines():
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 600
    }
    assert long == {}


def _tree(tmp_path, files):
    root = tmp_path / "commerce_api"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize(
    "files, expected",
    [
        # products reaching up into orders, at module level
        (
            {"products/services.py": "from ..orders.queries import sku_has_open_orders\n"},
            ["commerce_api.products.services:1 imports commerce_api.orders.queries"],
        ),
        # jobs knowing a domain through a lazy import
        (
            {"jobs/worker.py": "def run():\n    from commerce_api.orders import tasks\n"},
            ["commerce_api.jobs.worker:2 imports commerce_api.orders"],
        ),
        # a service importing the web layer
        (
            {"inventory/services.py": "from ..http import envelope\n"},
            ["commerce_api.inventory.services:1 imports commerce_api.http"],
        ),
        # the ground floor importing a domain
        (
            {"pagination.py": "from .auth.models import Tenant\n"},
            ["commerce_api.pagination:1 imports commerce_api.auth.models"],
        ),
    ],
)
def test_a_back_edge_is_found(tmp_path, files, expected):
    assert back_edges(_tree(tmp_path, files)) == expected


def test_edges_downwards_and_to_the_top_edges_pass(tmp_path):
    root = _tree(
        tmp_path,
        {
            "orders/pulls.py": "from ..marketplaces.registry import get_connector\n",
            "orders/routes.py": "from ..http.envelope import one\nfrom . import pulls\n",
            "analysis/tasks.py": "from ..orders import models\nfrom ..jobs import registry\n",
            "products/schemas.py": "from ..http.lists import ListArgsSchema\n",
        },
    )
    assert back_edges(root) == []


# -- SQL names its tables through the models (commerce_api/sql.py) ----------------------------

SQL_NAMING = re.compile(
    # the keywords in capitals, as the service writes SQL (prose "from stock" is not SQL)
    r"""(?x)\b(?:FROM|JOIN|INTO|UPDATE|TABLE|INDEXED\s+BY)\s+"?([a-z_][a-z0-9_]*)"?"""
)


def _table_models():
    """Every model's table name -> the module that defines the model."""
    import importlib

    import peewee

    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path, PACKAGE)
        if ".migrations" in module or module.endswith("__main__"):
            continue
        importlib.import_module(module)
    found = {}
    todo = [peewee.Model]
    while todo:
        model = todo.pop()
        todo.extend(model.__subclasses__())
        if model.__module__.startswith("commerce_api.") and ".migrations" not in model.__module__:
            found[model._meta.table_name] = model.__module__
    return found


def _string_parts(tree):
    """``(line, text)`` of every string constant, f-strings' literal parts included."""
    inside = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in inside:
                yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(
                part.value if isinstance(part, ast.Constant) else "{}" for part in node.values
            )
            yield node.lineno, text


def tables_named_in_strings(root, tables):
    """``{relative path: [(line, table)]}`` of SQL text that names a table by hand."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        relative = str(path.relative_to(root))
        if relative.startswith("migrations/") or relative == "sql.py":
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, text in _string_parts(tree):
            for match in SQL_NAMING.finditer(text):
                if match.group(1).lower() in tables:
                    found.setdefault(relative, []).append((line, match.group(1)))
    return found


def test_sql_names_tables_through_the_models():
    tables = _table_models()
    found = tables_named_in_strings(PACKAGE, tables)
    assert found == {}


def test_the_ground_floor_names_no_domain_table():
    tables = _table_models()
    ground = set(dict(LAYERS)["ground"])
    domain_tables = {
        table for table, module in tables.items() if module.split(".")[1] not in ground
    }
    found = tables_named_in_strings(PACKAGE, domain_tables)
    named = {path for path in found if path.removesuffix(".py").split("/")[0] in ground}
    assert named == set()


def test_a_table_named_in_sql_text_is_found(tmp_path):
    root = _tree(
        tmp_path,
        {
            "a.py": 'SQL = f"UPDATE job SET status = {p} WHERE id = {p}"\n',
            "b.py": 'SQL = "SELECT 1 FROM \\"listing\\" WHERE id = ?"\n',
            "c.py": 'SQL = Statement("UPDATE {Job} SET {Job.status} = {p}", Job=Job)\n',
            "d.py": 'TEXT = "Update the job from the queue"\n',
        },
    )
    found = tables_named_in_strings(root, {"job", "listing"})
    assert found == {"a.py": [(1, "job")], "b.py": [(1, "listing")]}


# The underscore rule (issue 26; STYLE.md: parts call each other's public methods only): a
# module uses its own private names only. ``self._x``, ``cls._x`` and ``super()._x`` are
# the object's own; any other ``obj._x`` (or ``getattr(obj, "_x")``) where ``commerce_api``
# defines ``_x`` (a function, class, assignment or attribute), and any
# ``from commerce_api... import _x``, reaches into another module or object. The
# libraries' conventions below are not ours to rename.
LIBRARY_PRIVATES = {
    "_meta",  # peewee: Model._meta
    "_exit",  # os._exit
    "_apidoc",  # flask-smorest: the documentation a decorator leaves on a view
    "_get_current_object",  # werkzeug: the object behind a proxy
}
OWN_OBJECTS = {"self", "cls"}
NAME_FUNCTIONS = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _parsed(root):
    for path in sorted(root.rglob("*.py")):
        yield module_name(path, root), ast.parse(path.read_text(), filename=str(path))


def private_names(root):
    """Every private name ``commerce_api`` defines: defs, classes, assigned names and
    attributes (minus the libraries' conventions)."""
    names = set()
    for _, tree in _parsed(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return {name for name in names if _private(name)} - LIBRARY_PRIVATES


def _own(node):
    """``self``, ``cls`` or ``super()``: the object's own attributes."""
    if isinstance(node, ast.Name):
        return node.id in OWN_OBJECTS
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _foreign_use(node, ours):
    """The private name ``node`` imports or reaches on another object, or None."""
    if isinstance(node, ast.ImportFrom):
        if node.level or (node.module or "").split(".")[0] == "commerce_api":
            names = [alias.name for alias in node.names if _private(alias.name)]
            return ", ".join(names) or None
    elif isinstance(node, ast.Attribute):
        if node.attr in ours and not _own(node.value):
            return node.attr
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in NAME_FUNCTIONS
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and node.args[1].value in ours
        and not _own(node.args[0])
    ):
        return node.args[1].value
    return None


def foreign_privates(root):
    """``module:line name`` for each private name used outside its module or object."""
    ours = private_names(root)
    found = []
    for module, tree in _parsed(root):
        for node in ast.walk(tree):
            name = _foreign_use(node, ours)
            if name:
                found.append((module, node.lineno, name))
    return [f"{module}:{line} {name}" for module, line, name in sorted(found)]


def test_no_module_uses_another_modules_private_names():
    assert foreign_privates(PACKAGE) == []


@pytest.mark.parametrize(
    "files, expected",
    [
        # a part calling another part's private method
        (
            {
                "jobs/worker.py": "class Worker:\n    def _mark_lost(self, entry): ...\n",
                "jobs/runtime.py": "def heartbeat(worker, entry):\n    worker._mark_lost(entry)\n",
            },
            ["commerce_api.jobs.runtime:2 _mark_lost"],
        ),
        # importing another module's private function
        (
            {
                "jobs/queue.py": "def _fence(job): ...\n",
                "jobs/worker.py": "from .queue import _fence\n",
                "tasks.py": "from commerce_api.jobs.queue import _fence\n",
            },
            ["commerce_api.jobs.worker:1 _fence", "commerce_api.tasks:1 _fence"],
        ),
        # a decorator's mark read by name on a view
        (
            {
                "auth/middleware.py": "def public(view):\n    view._public = True\n",
                "http/spec.py": "def is_open(view):\n    return getattr(view, '_public', 0)\n",
            },
            ["commerce_api.auth.middleware:2 _public", "commerce_api.http.spec:2 _public"],
        ),
    ],
)
def test_a_foreign_private_name_is_found(tmp_path, files, expected):
    assert foreign_privates(_tree(tmp_path, files)) == expected


def test_own_privates_and_library_conventions_pass(tmp_path):
    root = _tree(
        tmp_path,
        {
            "jobs/worker.py": """\
                import os

                from peewee import Model


                class Worker(Base):
                    _lock = None

                    def _wake(self):
                        self._lock = 1
                        super()._wake()
                        os._exit(getattr(self, "_lock"))

                    @classmethod
                    def _make(cls):
                        return cls._make, Model._meta, view._apidoc, proxy._get_current_object()
                """,
        },
    )
    assert foreign_privates(root) == []


# -- No import circles (issue 37) -------------------------------------------------------------
# Counted by bench/structure.py, loaded here so that the script and the test count alike:
# every import is an arrow, those inside functions, under ``if TYPE_CHECKING:`` and for
# annotations only included.


def _structure():
    import importlib.util

    path = PACKAGE.parent / "bench" / "structure.py"
    spec = importlib.util.spec_from_file_location("bench_structure", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Circles left for phase 2 of issue 37 (folders other helpers work in this round), each
# named; none remain.
ALLOWED_CIRCLES = []


def test_no_import_circles():
    structure = _structure()
    graph = structure.import_graph(PACKAGE)
    found = [
        structure.circle_arrows(graph, circle)
        for circle in structure.circles(graph)
        if circle not in ALLOWED_CIRCLES
    ]
    assert found == []


@pytest.mark.parametrize(
    "files, expected",
    [
        # a runtime circle through ``from module import name``
        (
            {
                "webhooks/__init__.py": "",
                "webhooks/endpoints.py": "from . import deliveries\n",
                "webhooks/deliveries.py": "from .fanout import mark\n",
                "webhooks/fanout.py": "from .endpoints import matches\n",
            },
            [
                [
                    "commerce_api.webhooks.deliveries",
                    "commerce_api.webhooks.endpoints",
                    "commerce_api.webhooks.fanout",
                ]
            ],
        ),
        # a circle through an annotation-only import
        (
            {
                "jobs/__init__.py": "",
                "jobs/worker.py": "from .runners import RunnerPool\n",
                "jobs/runners.py": (
                    "from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n"
                    "    from .worker import Worker\n"
                ),
            },
            [["commerce_api.jobs.runners", "commerce_api.jobs.worker"]],
        ),
        # a lazy import inside a function is an arrow too
        (
            {
                "pricing/__init__.py": "",
                "pricing/engine.py": "from .probability import score\n",
                "pricing/probability.py": "def f():\n    from commerce_api.pricing import engine\n",
            },
            [["commerce_api.pricing.engine", "commerce_api.pricing.probability"]],
        ),
    ],
)
def test_an_import_circle_is_found(tmp_path, files, expected):
    structure = _structure()
    assert structure.circles(structure.import_graph(_tree(tmp_path, files))) == expected


def test_imports_one_way_make_no_circle(tmp_path):
    root = _tree(
        tmp_path,
        {
            "webhooks/__init__.py": "",
            "webhooks/endpoints.py": "from . import deliveries\nfrom .subscriptions import x\n",
            "webhooks/deliveries.py": "from .fanout import mark\n",
            "webhooks/fanout.py": "from .subscriptions import matches\n",
            "webhooks/subscriptions.py": "WILDCARD = '*'\n",
        },
    )
    structure = _structure()
    assert structure.circles(structure.import_graph(root)) == []


# -- No function over 80 lines (issue 37) -----------------------------------------------------
# Counted by bench/structure.py (``function_lengths``: every ``def``, methods and nested
# functions included, from its ``def`` line to its last line), loaded as above.
LONGEST_FUNCTION = 80


def test_no_function_is_over_80_lines():
    structure = _structure()
    found = [
        f"{module}.{name}: {lines} lines"
        for lines, module, name in structure.function_lengths(PACKAGE)
        if lines > LONGEST_FUNCTION
    ]
    assert found == []


def test_a_long_function_is_found(tmp_path):
    body = "".join(f"    x{n} = {n}\n" for n in range(80))
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "orders/__init__.py": "",
            "orders/pulls.py": (
                f"def pull():\n{body}\n"  # 81 lines: the def and 80 more
                "class Puller:\n"
                f"    def run(self):\n{textwrap.indent(body, '    ')}"
                "def short():\n    return 1\n"
            ),
        },
    )
    structure = _structure()
    long = [
        (lines, module, name)
        for lines, module, name in structure.function_lengths(root)
        if lines > LONGEST_FUNCTION
    ]
    assert long == [
        (81, "commerce_api.orders.pulls", "Puller.run"),
        (81, "commerce_api.orders.pulls", "pull"),
    ]
