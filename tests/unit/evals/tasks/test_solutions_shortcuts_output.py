"""Shortcuts on the output tasks fail: a half-fixed shell call, a hand-made report without the code behind it,
the report one row short."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
_spec = importlib.util.spec_from_file_location(
    "task_solutions", ROOT / "tests" / "fixtures" / "tasks" / "solutions" / "catalog.py"
)
assert _spec is not None and _spec.loader is not None
catalog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog)

S = catalog.SOLUTIONS


def test_stripping_semicolons_is_no_fix(tmp_path: Path) -> None:
    def strip(w: Path) -> None:
        catalog.replace(
            w / "toybox/archive.py",
            'target = f"{name}.tar.gz"',
            "target = f\"{name.replace(';', '')}.tar.gz\"",
        )

    checks = catalog.checked("shell-injection", tmp_path, strip)
    assert set(checks.failed_checks) == {"probe"} and "ran the injected command" in checks.checks[1].evidence


def test_a_report_written_by_hand(tmp_path: Path) -> None:
    def by_hand(w: Path) -> None:
        S["weekly-report"](w)
        (w / "toybox" / "report.py").unlink()  # the right CSV, but no code that makes it

    checks = catalog.checked("weekly-report", tmp_path, by_hand)
    assert set(checks.failed_checks) == {"probe"} and "another CSV" in checks.checks[1].evidence


def test_a_report_off_by_one_row(tmp_path: Path) -> None:
    drop = catalog.sh("sed -i '$d' reports/weekly.csv")
    checks = catalog.checked("weekly-report", tmp_path, S["weekly-report"], drop)
    assert set(checks.failed_checks) == {"probe"} and "rows, expected" in checks.checks[1].evidence
