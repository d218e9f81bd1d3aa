"""`assay hillclimb` edits only a profile of the repository it runs from: without --profile it refuses with
one line naming `assay agent profile init`, and that command copies the built-in profile to climb."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from assay.agents.reference import DEFAULT_PROFILE
from assay.cli import main
from assay.hillclimb._edits import profile_error

if TYPE_CHECKING:
    from conftest import Climb


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _args(c: Climb, *extra: str) -> list[str]:
    return ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--fixer", c.fixer([]),
            "--out", str(c.out), *extra]  # fmt: skip


def _assay_tree() -> str:
    root = Path(subprocess.run(["git", "-C", str(DEFAULT_PROFILE), "rev-parse", "--show-toplevel"],
                               capture_output=True, text=True, check=False).stdout.strip() or "/")  # fmt: skip
    return subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--branch"], capture_output=True,
                          text=True, check=False).stdout  # fmt: skip


def test_without_profile_it_refuses_in_one_line(climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    before = _assay_tree()
    code, _, err = _cli(_args(climb), capsys)
    assert code == 1
    (line,) = err.strip().splitlines()
    assert "--profile DIR is required" in line and "`assay agent profile init agent-profile`" in line
    assert climb.git("branch", "--list", "hillclimb/*") == ""  # no scratch branch anywhere
    assert _assay_tree() == before  # assay's own checkout untouched


def test_a_profile_outside_the_current_repository_is_refused(
    climb: Climb, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.chdir(other)  # the profile is in climb.repo, the command runs from another repository
    code, _, err = _cli([*_args(climb), "--profile", str(climb.profile)], capsys)
    assert code == 1 and f"not under the repository of the current directory ({other.resolve()})" in err
    monkeypatch.chdir(tmp_path)  # outside any repository
    code, _, err = _cli([*_args(climb), "--profile", str(climb.profile)], capsys)
    assert code == 1 and "not under a git repository" in err
    assert climb.git("branch", "--list", "hillclimb/*") == ""


@pytest.mark.slow
def test_profile_init_copies_the_built_in_profile_and_the_climb_runs_on_it(
    climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(climb.profile)
    code, out, _ = _cli(["agent", "profile", "init", "profile"], capsys)
    assert code == 0 and "copied the built-in profile to profile" in out
    assert profile_error(climb.profile) is None  # it loads as the reference agent's profile
    assert (climb.profile / "system.md").read_bytes() == (DEFAULT_PROFILE / "system.md").read_bytes()
    code, _, err = _cli(["agent", "profile", "init", "profile"], capsys)
    assert code == 1 and "exists and is not empty" in err
    climb.git("add", "-A")
    climb.git("commit", "-q", "-m", "profile")
    code, _, err = _cli([*_args(climb), "--profile", "profile", "--rounds", "1"], capsys)
    assert code == 0, err
    assert climb.git("branch", "--show-current").startswith("hillclimb/")
