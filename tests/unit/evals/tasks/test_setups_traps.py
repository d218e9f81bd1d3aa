"""The warm-cache and never-finishing setups: the planted test passes only with the cache built, and the
planted hanging test is still running after seconds while its neighbour fails at once."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from assay.evals._workspace import git
from assay.evals.tasks._task import Setup

_spec = importlib.util.spec_from_file_location("setups_helpers", Path(__file__).with_name("test_setups.py"))
assert _spec is not None and _spec.loader is not None
_helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_helpers)
prepared, pytest_in = _helpers.prepared, _helpers.pytest_in


def test_warm_cache_test_passes_only_warm(tmp_path: Path) -> None:
    p = prepared(tmp_path, Setup(kind="warm_cache_test"))
    assert not (p.workdir / ".toybox_cache").exists()
    code, out = pytest_in(p.workdir, "tests/test_zones.py")
    assert code == 1 and "FileNotFoundError" in out
    subprocess.run([sys.executable, "-m", "toybox.zones"], cwd=p.workdir, check=True, env={"PYTHONPATH": "."})
    code, _ = pytest_in(p.workdir, "tests/test_zones.py")
    assert code == 0
    assert git(p.workdir, "status", "--porcelain") == ""  # the cache is ignored: nothing to commit


def test_hanging_test_never_finishes(tmp_path: Path) -> None:
    p = prepared(tmp_path, Setup(kind="hanging_test"))
    code, _ = pytest_in(p.workdir, p.facts["hanging_test"], timeout=4)
    assert code is None  # still running after 4 s
    code, out = pytest_in(p.workdir, "tests/test_jobqueue_retries.py::test_retries_then_gives_up")
    assert code == 1 and "tries" in out  # the other planted test fails at once: the bug, not a hang
