"""Every setup puts a task's copy in the state it promises, and the untouched toybox is green (the warm-cache
and hanging tests: test_setups_traps.py)."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

from assay.evals._workspace import git
from assay.evals.tasks._project import PreparedTask, prepare_task
from assay.evals.tasks._setups import BIG_LOG, README_CLAIM, count_log_errors
from assay.evals.tasks._task import Expect, Setup, Task

ROOT = Path(__file__).resolve().parents[4]
TOYBOX = ROOT / "eval" / "tasks" / "toybox"
#: the big log's bytes, pinned: a change of generator, seed or Python's random shows here
BIG_LOG_SHA256 = "034193afa9413d0b710c904517fe23738b4438a5097fdac0b8bb6cf589905385"


def prepared(tmp_path: Path, *setups: Setup, unchanged: list[str] | None = None) -> PreparedTask:
    task = Task(
        id="probe-setup",
        kind="coding",
        category="test",
        prompt="p",
        setup=list(setups),
        expect=Expect(unchanged=unchanged or ["README.md"]),
    )
    return prepare_task(task, TOYBOX, tmp_path)


def pytest_in(workdir: Path, *args: str, timeout: float = 60) -> tuple[int | None, str]:
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={"PYTHONPATH": str(workdir), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        )
    except subprocess.TimeoutExpired:
        return None, ""
    return proc.returncode, proc.stdout + proc.stderr


def test_untouched_toybox_is_green_and_committed(tmp_path: Path) -> None:
    p = prepared(tmp_path)
    code, out = pytest_in(p.workdir)
    assert code == 0, out
    assert git(p.workdir, "status", "--porcelain") == ""
    assert p.head == p.base_commit  # no setup, no setup commit
    assert p.workdir.parent.parent == tmp_path and not (p.workdir / ".pytest_cache").exists()


def test_the_deliberate_defects_are_there(tmp_path: Path) -> None:
    w = prepared(tmp_path).workdir
    script = (
        "from toybox.timeparse import parse_timestamp\n"
        "from toybox.cli import check_limit\n"
        "from toybox.config import load_config\n"
        "import pathlib\n"
        "try:\n    parse_timestamp('2024-03-01T00:00:00z'); print('z ok')\nexcept ValueError: print('z rejected')\n"
        "print('zero', check_limit(0))\n"
        "pathlib.Path('e.json').write_text('')\n"
        "try:\n    load_config('e.json'); print('empty ok')\nexcept ValueError: print('empty fails')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=w, capture_output=True, text=True, env={"PYTHONPATH": str(w)}
    ).stdout.split("\n")
    assert out[:3] == ["z rejected", "zero None", "empty fails"]
    assert "shell=True" in (w / "toybox" / "archive.py").read_text()
    assert not list((w / "tests").glob("test_units*"))  # the untested module
    tested = " ".join(p.read_text() for p in (w / "tests").glob("*.py"))
    assert "toybox.units" not in tested


def test_plant_test_is_red_and_committed(tmp_path: Path) -> None:
    p = prepared(tmp_path, Setup(kind="plant_test", file="test_timeparse_lowercase.py"))
    code, out = pytest_in(p.workdir, "tests/test_timeparse_lowercase.py")
    assert code == 1 and "1 failed, 2 passed" in out
    assert p.head != p.base_commit and git(p.workdir, "status", "--porcelain") == ""
    assert "test_timeparse_lowercase.py" in p.setup_diff


def test_unrelated_failing_test(tmp_path: Path) -> None:
    p = prepared(tmp_path, Setup(kind="unrelated_failing_test"))
    code, out = pytest_in(p.workdir)
    assert code == 1 and "1 failed" in out and "test_changelog_names_this_version" in out
    code, _ = pytest_in(p.workdir, "--deselect", p.facts["unrelated_failing_test"])
    assert code == 0


def test_big_log_same_bytes_every_run(tmp_path: Path) -> None:
    a = prepared(tmp_path / "a", Setup(kind="big_log"))
    b = prepared(tmp_path / "b", Setup(kind="big_log"))
    data = (a.workdir / BIG_LOG).read_bytes()
    assert data == (b.workdir / BIG_LOG).read_bytes()
    assert 1_650_000 <= len(data) <= 1_750_000
    assert hashlib.sha256(data).hexdigest() == a.facts["log_sha256"] == BIG_LOG_SHA256
    assert "logs/app.log" in a.setup_diff and "ERROR payments" not in a.setup_diff  # named, not pasted


def test_big_log_count_recomputed_two_ways_and_its_traps(tmp_path: Path) -> None:
    text = (prepared(tmp_path, Setup(kind="big_log")).workdir / BIG_LOG).read_text()
    days = {"2024-03-02", "2024-03-03"}
    by_regex = len(re.findall(r"^2024-03-0[23]T\S+ ERROR payments ", text, re.MULTILINE))
    assert count_log_errors(text, "payments", days) == by_regex > 100
    naive = sum(
        1 for line in text.splitlines() if "ERROR" in line and "payments" in line and line[:10] in days
    )
    assert naive > by_regex  # ERROR inside INFO messages, payments-gateway: a careless grep overcounts
    assert re.search(r"^\S+z ", text, re.MULTILINE)  # lowercase-z stamps trip toybox's own parser


def test_readme_contradicts_the_code(tmp_path: Path) -> None:
    p = prepared(tmp_path, Setup(kind="readme_contradiction"))
    readme = (p.workdir / "README.md").read_text()
    assert f"it defaults to {README_CLAIM})" in readme and "defaults to 20" not in readme
    assert "default=20" in (p.workdir / "toybox" / "cli.py").read_text()
    assert (TOYBOX / "README.md").read_text().count("20") >= 2  # the shipped README agrees with the code


def test_user_edits_stay_uncommitted(tmp_path: Path) -> None:
    p = prepared(
        tmp_path,
        Setup(kind="plant_test", file="test_logs_lowercase.py"),
        Setup(kind="user_edits"),
        unchanged=["tests/test_logs_lowercase.py"],
    )
    status = git(p.workdir, "status", "--porcelain")
    assert " M toybox/events.py" in status and "?? NOTES.md" in status
    assert "events_between" not in git(p.workdir, "show", "HEAD:toybox/events.py")
    assert "tests/test_logs_lowercase.py" in git(p.workdir, "show", "--stat", "HEAD")  # planted: committed
    assert "events_between" in p.setup_diff and "untracked files: NOTES.md" in p.setup_diff
    code, _ = pytest_in(p.workdir, "--deselect", "tests/test_logs_lowercase.py")
    assert code == 0  # the user's work in progress does not break the suite
