"""Count what makes the code hard to live in (issue 37): import circles and long functions.

    .venv/bin/python bench/structure.py [--long 80] [--list 60] [--root commerce_api]

Import circles are the strongly connected components of the module graph of the package.
Every import counts: at module level, inside functions (a lazy import is still an arrow),
under ``if TYPE_CHECKING:`` and for annotations only. ``from package import name`` is an
arrow to ``package.name`` when that is a module, else to the package. Importing
``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``; those implicit arrows to the
packages are left out, as import-linter and pydeps leave them out.

Long functions: every ``def`` (methods and nested functions included) from its ``def`` line
to its last line, per module. The architecture test (tests/test_architecture.py) loads this
file for its circle check, so the script and the test count the same way.
"""

import argparse
import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "commerce_api"


def module_name(path, root):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules_of(root):
    """``{module name: path}`` of every module under ``root``."""
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def _imported(node, module, is_package):
    """The dotted names one import statement names (``from x import y`` gives ``x.y``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = (module if is_package else module.rpartition(".")[0]).split(".")
        prefix = ".".join(base[: len(base) - (node.level - 1)])
        source = f"{prefix}.{node.module}" if node.module else prefix
    else:
        source = node.module
    return [f"{source}.{alias.name}" for alias in node.names if alias.name != "*"] or [source]


def _resolve(name, modules):
    """The deepest module of ``modules`` that ``name`` names, or None."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(root):
    """``{module: {target: first line}}``: every arrow between modules of ``root``."""
    modules = modules_of(root)
    graph = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        arrows = graph.setdefault(module, {})
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _imported(node, module, is_package):
                target = _resolve(name, modules)
                if target and target != module:
                    arrows.setdefault(target, node.lineno)
    return graph


def circles(graph):
    """The import circles: strongly connected components of more than one module, each
    sorted, the list sorted (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def circle_arrows(graph, component):
    """``a:line -> b`` for each arrow inside one circle."""
    members = set(component)
    return [
        f"{source}:{line} -> {target}"
        for source in component
        for target, line in sorted(graph[source].items(), key=lambda item: item[1])
        if target in members
    ]


def function_lengths(root):
    """``[(lines, module, qualified name)]`` of every function, longest first."""
    found = []
    for module, path in modules_of(root).items():
        tree = ast.parse(path.read_text(), filename=str(path))

        todo = [(tree, "")]
        while todo:
            node, prefix = todo.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = f"{prefix}{child.name}"
                    found.append((child.end_lineno - child.lineno + 1, module, name))
                    todo.append((child, f"{name}."))
                elif isinstance(child, ast.ClassDef):
                    todo.append((child, f"{prefix}{child.name}."))
                else:
                    todo.append((child, prefix))
    return sorted(found, key=lambda item: (-item[0], item[1], item[2]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=ROOT)
    parser.add_argument("--long", type=int, default=80, help="count functions over this")
    parser.add_argument("--list", type=int, default=60, help="list functions over this")
    args = parser.parse_args(argv)
    root = args.root.resolve()

    graph = import_graph(root)
    found = circles(graph)
    print(f"modules: {len(graph)}, arrows: {sum(len(t) for t in graph.values())}")
    print(f"import circles: {len(found)}")
    for component in found:
        print(f"  circle of {len(component)}: {', '.join(component)}")
        for arrow in circle_arrows(graph, component):
            print(f"    {arrow}")

    lengths = function_lengths(root)
    over = [item for item in lengths if item[0] > args.long]
    listed = [item for item in lengths if item[0] > args.list]
    print(f"functions over {args.long} lines: {len(over)}")
    print(f"functions over {args.list} lines: {len(listed)}")
    for lines, module, name in listed:
        mark = "*" if lines > args.long else " "
        print(f"  {mark} {lines:4d}  {module}.{name}")
    per_module = {}
    for _, module, _ in listed:
        per_module[module] = per_module.get(module, 0) + 1
    print(f"modules with functions over {args.list} lines: {len(per_module)}")
    for module, count in sorted(per_module.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count:3d}  {module}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
