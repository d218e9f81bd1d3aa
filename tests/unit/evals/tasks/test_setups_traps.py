"""The warm-cache, never-finishing and not-installed setups: the planted test passes only with the cache built,
the planted hanging test is still running after seconds while its neighbour fails at once, and the package moved
under src/ cannot be imported by the README's ``python -m pytest`` until the path is given."""

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


def test_not_installed_cannot_import_from_the_root(tmp_path: Path) -> None:
    p = prepared(tmp_path, Setup(kind="not_installed"))
    assert p.facts == {"package_dir": "src/toybox"}
    assert (p.workdir / "src/toybox/units.py").is_file() and not (p.workdir / "toybox").exists()
    assert git(p.workdir, "status", "--porcelain") == ""  # the move is committed: the user's checkout
    code, out = pytest_in(p.workdir)  # the root on PYTHONPATH, as the checks run: still no toybox
    assert code == 2 and out.count("No module named 'toybox'") == 7
    env = {"PYTHONPATH": str(p.workdir / "src"), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=p.workdir,
        env=env,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0  # the suite itself is green once the package can be found
