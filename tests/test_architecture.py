"""Which domain may know which (STYLE.md): imports run from higher layers to lower ones only.

Every module of ``commerce_api`` is parsed with ``ast``; every import counts, the ones
inside functions included (a lazy import is still an arrow).
"""

import ast
import pathlib
import textwrap

import pytest

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
            "claims",
            "sendloop",
            "shapes",
        ),
    ),
    ("auth", ("auth",)),
    ("events", ("events",)),
    ("jobs", ("jobs",)),  # queue, worker, registry: knows no domain
    ("products", ("products",)),
    ("inventory", ("inventory",)),
    ("marketplaces", ("marketplaces",)),
    ("orders", ("orders",)),
    ("pricing", ("pricing",)),
    ("webhooks", ("webhooks",)),
    ("analysis", ("analysis",)),
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
