"""``assay.judge`` is generic: none of its modules imports a benchmark, an agent or anything above it."""

from __future__ import annotations

import ast
from pathlib import Path

import assay.judge

#: packages above the judge in the layers (and the agents, which it needs no more than the benchmarks)
ABOVE = ("cli", "view", "ci", "hillclimb", "evals", "exec", "report", "gate", "stats", "agents")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def test_no_judge_module_imports_a_benchmark_or_a_package_above_it() -> None:
    package = Path(assay.judge.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert {p.name for p in modules} >= {"__init__.py", "_judge.py"}
    for path in modules:
        bad = sorted(name for name in _imports(path) if name.split(".")[:2] in [["assay", p] for p in ABOVE])
        assert not bad, f"{path.name} imports {bad}"


def test_the_judge_names_no_rubric() -> None:
    # what moved out: a benchmark's rubric, view and verdict live in its own package
    for name in (
        "JudgeView",
        "derive",
        "DIMENSIONS",
        "RUBRIC_VERSION",
        "parse_judge_answer",
        "answer_schema",
    ):
        assert not hasattr(assay.judge, name), name


def test_importing_the_judge_loads_no_package_above_it() -> None:
    import subprocess
    import sys

    code = (
        "import sys, assay.judge; print(' '.join(sorted(m for m in sys.modules if m.startswith('assay.'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    packages = {".".join(m.split(".")[:2]) for m in loaded.split()}
    assert packages.isdisjoint({f"assay.{p}" for p in ABOVE}), packages
