"""The coding benchmarks' one diff rule (evals._workspace): the journal's diff and the applicable patch see the
same change against the same base."""

from __future__ import annotations

import subprocess
from pathlib import Path

from assay.evals._workspace import DIFF_KEEP, agent_diff, agent_patch, changed_files, git, keep_diff


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
