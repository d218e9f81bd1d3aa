"""The coding benchmarks' one diff rule (evals._workspace): the journal's diff and the applicable patch see the
same change against the same base."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.evals._workspace import (
    DIFF_KEEP,
    TEST_CONFIG,
    agent_diff,
    agent_patch,
    changed_files,
    check_env,
    git,
    grader_copy,
    keep_diff,
    lay_back,
    snapshot,
)


def _repo(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "w"
    (work / "logs").mkdir(parents=True)
    (work / "a.py").write_text("x = 1\n")
    (work / "logs" / "app.log").write_text("old\n")
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "base")
    return work, git(work, "rev-parse", "HEAD").strip()


def test_the_diff_holds_edits_new_files_and_commits_but_no_caches(tmp_path: Path) -> None:
    work, base = _repo(tmp_path)
    assert agent_diff(work, base) == ("", False)
    (work / "a.py").write_text("x = 2\n")
    (work / "new.py").write_text("y = 3\n")
    (work / "__pycache__").mkdir()
    (work / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0\1")
    diff, edited = agent_diff(work, base)
    assert edited and "+x = 2" in diff and "new file mode" in diff and "+y = 3" in diff
    assert "__pycache__" not in diff and " 2 files changed" in diff
    git(work, "commit", "-q", "-am", "the agent's own commit")
    moved, _ = agent_diff(work, base)
    assert moved.startswith(f"(the agent moved HEAD from {base[:12]})") and "+x = 2" in moved


def test_the_patch_applies_on_a_fresh_checkout_of_the_base(tmp_path: Path) -> None:
    work, base = _repo(tmp_path)
    (work / "a.py").write_text("x = 2\n")
    (work / "new.py").write_text("y = 3\n")
    patch = agent_patch(work, base)
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(work), str(fresh)], check=True)
    subprocess.run(["git", "-C", str(fresh), "checkout", "-q", base], check=True)
    subprocess.run(["git", "-C", str(fresh), "apply"], input=patch, text=True, check=True)
    assert (fresh / "a.py").read_text() == "x = 2\n" and (fresh / "new.py").read_text() == "y = 3\n"


def test_an_excluded_path_is_left_out_of_the_diff(tmp_path: Path) -> None:
    work, base = _repo(tmp_path)
    (work / "logs" / "app.log").write_text("SECRET-LOOKING LOG LINE\n" * 3)
    diff, edited = agent_diff(work, base, exclude=("logs/*.log",))
    assert edited is False and "LOG LINE" not in diff  # a log the agent touched is no edit of the project
    (work / "a.py").write_text("x = 2\n")
    diff, edited = agent_diff(work, base, exclude=("logs/*.log",))
    assert edited and "LOG LINE" not in diff and "+x = 2" in diff


def test_the_journal_keeps_diff_keep_characters_and_says_how_many_more() -> None:
    assert keep_diff("x" * DIFF_KEEP) == "x" * DIFF_KEEP
    assert keep_diff("x" * (DIFF_KEEP + 7)) == "x" * DIFF_KEEP + "\n[... 7 more characters]"


def test_changed_files_against_a_snapshot(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.py").write_text("a")
    (tmp_path / "t" / "b.py").write_text("b")
    snapshot = {"t/a.py": b"a", "t/b.py": b"b"}
    assert changed_files(tmp_path, ["t/"], snapshot) == []
    (tmp_path / "t" / "a.py").write_text("A")
    (tmp_path / "t" / "b.py").unlink()
    (tmp_path / "t" / "c.py").write_text("c")
    assert changed_files(tmp_path, ["t/"], snapshot) == ["added t/c.py", "changed t/a.py", "removed t/b.py"]


def test_history_rewritten_to_prune_the_base_is_the_agents_doing_not_an_outage(tmp_path: Path) -> None:
    work, base = _repo(tmp_path)
    (work / "a.py").write_text("x = 2\n")
    who = ["-c", "user.name=a", "-c", "user.email=a@example.invalid"]
    for args in (["add", "-A"], ["commit", "-q", "--amend", "--no-edit"], ["reflog", "expire", "--expire=now", "--all"],
                 ["gc", "-q", "--prune=now"]):  # fmt: skip
        subprocess.run(["git", *who, *args], cwd=work, check=True, capture_output=True)
    diff, edited = agent_diff(work, base)
    assert edited and "removed commit" in diff and base[:12] in diff


def test_the_graders_copy_follows_no_link_out_of_the_workdir(tmp_path: Path) -> None:
    work, outside = tmp_path / "w", tmp_path / "gold.py"
    work.mkdir()
    outside.write_text("def add(a, b):\n    return a + b\n")
    (work / "own.py").write_text("x = 1\n")
    (work / "calc.py").symlink_to(outside)
    (work / "alias.py").symlink_to("own.py")  # a link inside the workdir stays
    dropped = grader_copy(work, tmp_path / "copy")
    assert dropped == ["calc.py"]
    assert not (tmp_path / "copy" / "calc.py").exists() and (tmp_path / "copy" / "alias.py").is_symlink()


def test_test_configuration_is_laid_back_to_its_start(tmp_path: Path) -> None:
    start, copy = tmp_path / "start", tmp_path / "copy"
    for root in (start, copy):
        (root / "tests").mkdir(parents=True)
        (root / "tests" / "conftest.py").write_text("fixtures = 1\n")
    before = snapshot(start, TEST_CONFIG)
    (copy / "conftest.py").write_text("def pytest_runtest_makereport(item, call): ...\n")
    (copy / "tests" / "conftest.py").write_text("changed\n")
    (copy / "calc.py").write_text("def add(a, b): ...\n")
    assert lay_back(copy, before, TEST_CONFIG) == ["conftest.py", "tests/conftest.py"]
    assert (
        not (copy / "conftest.py").exists()
        and (copy / "tests" / "conftest.py").read_text() == "fixtures = 1\n"
    )
    assert (copy / "calc.py").is_file()  # the agent's own code stays


def test_a_checks_environment_holds_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-a-real-key-000000000000")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = check_env(tmp_path / "project")
    assert "ANTHROPIC_API_KEY" not in env and "MY_SERVICE_TOKEN" not in env and env["LANG"] == "C.UTF-8"
