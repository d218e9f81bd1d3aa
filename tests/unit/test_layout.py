"""The layout is a checked contract (README, "Contributing"): no import cycle between modules, no private name
imported from outside its package, small modules and ``__init__.py`` files, typed options.

The layers themselves are import-linter's contracts in ``pyproject.toml`` (``lint-imports`` in ``.ci/run``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import grimp

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "assay"
MAX_MODULE_LINES = 600
MAX_INIT_LINES = 60


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def test_no_import_cycle_between_modules() -> None:
    graph = grimp.build_graph("assay", cache_dir=None)
    assert len(graph.modules) > 100  # the real package, not an empty one
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("p.a", "p.b", "p.c"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.b", imported="p.c")
    assert _cycles(graph) == [["p.a", "p.b"]]


def _private_owner(target: str, modules: dict[str, Path]) -> str | None:
    """The package that holds the innermost private segment of ``target`` (a ``_module`` or a ``_name`` in a
    module), or None if every segment is public."""
    parts = target.split(".")
    owner = None
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            owner = ".".join(parts[:i])
            if owner in modules and modules[owner].name != "__init__.py":  # a name in a module: its package
                owner = owner.rsplit(".", 1)[0]
    return owner


def private_imports(modules: dict[str, Path]) -> list[str]:
    """``importer -> target`` for every import of a private module or name from outside the package that owns it."""
    bad = []
    for name, path in sorted(modules.items()):
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                if not target.startswith("assay"):
                    continue
                owner = _private_owner(target, modules)
                if owner is not None and name != owner and not name.startswith(owner + "."):
                    bad.append(f"{name} -> {target}")
    return bad


def test_no_private_name_imported_from_outside_its_package() -> None:
    assert private_imports(_modules()) == []


def test_the_private_import_check_catches_one(tmp_path: Path) -> None:
    pkg = tmp_path / "assay"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    (pkg / "a" / "__init__.py").write_text("from assay.a._impl import thing\n")
    (pkg / "a" / "_impl.py").write_text("thing = 1\n_hidden = 2\n")
    (pkg / "b" / "__init__.py").write_text("")
    (pkg / "a" / "sibling.py").write_text("from assay.a._impl import _hidden\n")  # the same package: fine
    (pkg / "b" / "use.py").write_text(
        "from assay.a import thing\nfrom assay.a._impl import thing as t\nfrom assay.a._impl import _hidden\n"
    )
    modules = {
        "assay.a": pkg / "a" / "__init__.py",
        "assay.a._impl": pkg / "a" / "_impl.py",
        "assay.a.sibling": pkg / "a" / "sibling.py",
        "assay.b": pkg / "b" / "__init__.py",
        "assay.b.use": pkg / "b" / "use.py",
    }
    assert private_imports(modules) == [
        "assay.b.use -> assay.a._impl.thing",
        "assay.b.use -> assay.a._impl._hidden",
    ]


def test_modules_and_init_files_stay_small() -> None:
    too_big = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        limit = MAX_INIT_LINES if path.name == "__init__.py" else MAX_MODULE_LINES
        if lines > limit:
            too_big.append(f"{path.relative_to(SRC)}: {lines} lines (limit {limit})")
    assert too_big == []


def test_benchmarks_read_typed_options_not_dict_lookups() -> None:
    lookup = re.compile(r"options\.get\(")
    found = [
        f"{path.relative_to(SRC)}:{n}"
        for package in ("evals", "hillclimb")
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if lookup.search(line)
    ]
    assert found == []
