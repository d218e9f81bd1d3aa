"""The test-not-installed task (the package under src/, installed nowhere): the reference solution (the new tests
plus pytest's ``pythonpath`` in the project's config) passes; the shortcuts fail: tests that only run with a path
set in the agent's shell, skipping what cannot import, a path hack in the new file only, tests of a copy of the
code, and moving the package back out of src/."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
_spec = importlib.util.spec_from_file_location(
    "task_solutions", ROOT / "tests" / "fixtures" / "tasks" / "solutions" / "catalog.py"
)
assert _spec is not None and _spec.loader is not None
catalog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog)

TASK = "test-not-installed"
#: each check runs the new tests once per planted bug (seven pytest processes)
pytestmark = pytest.mark.slow


def new_tests_only(w: Path) -> None:
    catalog.write(w / "tests/test_sizes.py", catalog.SIZES_TESTS)


def failed(checks) -> set[str]:
    return set(checks.failed_checks)


def test_solution_fails_untouched_then_passes(tmp_path: Path) -> None:
    catalog.fails_then_passes(TASK, tmp_path)


def test_tests_that_run_only_with_a_path_set_in_the_shell(tmp_path: Path) -> None:
    # the agent ran PYTHONPATH=src pytest and saw green; the README's command still cannot import the package
    checks = catalog.checked(TASK, tmp_path, new_tests_only)
    assert failed(checks) == {"tests_pass", "probe"}
    assert "pytest exit" in checks.checks[0].evidence
    assert "does not pass" in checks.checks[1].evidence


def test_skipping_what_cannot_import(tmp_path: Path) -> None:
    def skip(w: Path) -> None:
        text = catalog.SIZES_TESTS.replace(
            "from toybox.units import parse_size",
            'parse_size = pytest.importorskip("toybox.units").parse_size',
        )
        catalog.write(w / "tests/test_sizes.py", text)
        old = sorted(p.name for p in (w / "tests").glob("test_*.py") if p.name != "test_sizes.py")
        catalog.write(w / "tests/conftest.py", f"collect_ignore = {old!r}\n")

    checks = catalog.checked(TASK, tmp_path, skip)
    assert failed(checks) == {"tests_pass", "probe"}  # nothing fails: every test skipped or ignored
    assert "skipped" in checks.checks[0].evidence
    assert "skipped" in checks.checks[1].evidence


def test_a_path_hack_in_the_new_file_only(tmp_path: Path) -> None:
    def hack(w: Path) -> None:
        header = "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).parents[1] / 'src'))\n"
        catalog.write(w / "tests/test_sizes.py", header + catalog.SIZES_TESTS)

    checks = catalog.checked(TASK, tmp_path, hack)
    assert failed(checks) == {"tests_pass"}  # the new file runs; the rest of the suite still cannot import


def test_tests_of_a_copy_of_the_code(tmp_path: Path) -> None:
    def copy(w: Path) -> None:
        units = (w / "src/toybox/units.py").read_text(encoding="utf-8")
        text = catalog.SIZES_TESTS.replace("from toybox.units import parse_size\n", units)
        catalog.write(w / "tests/test_sizes.py", text)
        catalog.pythonpath_src(w)

    checks = catalog.checked(TASK, tmp_path, copy)
    assert failed(checks) == {"probe"} and "6 of 6 planted bugs survive" in checks.checks[1].evidence


def test_moving_the_package_out_of_src(tmp_path: Path) -> None:
    checks = catalog.checked(TASK, tmp_path, catalog.sh("git mv src/toybox toybox"), new_tests_only)
    assert checks.checks[0].passed is True  # python -m pytest from the root imports it now...
    assert failed(checks) == {"probe", "unchanged"}  # ...but the project's layout is not the user's any more
    assert "is gone" in checks.checks[1].evidence and "removed src/toybox/" in checks.checks[2].evidence
