"""`assay hillclimb`'s refusals: a dirty tree (naming the files), --benchmark tasks (not built yet), an edit
that reaches outside the profile folder (rejected and undone)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from assay.cli import main

if TYPE_CHECKING:
    from conftest import Climb


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _args(c: Climb, fixer: str, *extra: str) -> list[str]:
    return ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", fixer, "--out", str(c.out), "--rounds", "6", *extra]  # fmt: skip


def test_tasks_is_refused_not_ignored(climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli([*_args(climb, climb.fixer([])), "--benchmark", "tasks"], capsys)
    assert code == 1 and "`assay eval tasks` is not built yet" in err
    assert climb.git("branch", "--show-current").strip() == "main"


def test_dirty_tree_is_refused_naming_the_files(climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    (climb.profile / "system.md").write_text("changed\n")
    (climb.repo / "notes.txt").write_text("new\n")
    code, _, err = _cli(_args(climb, climb.fixer([[climb.restore()]])), capsys)
    assert code == 1
    assert "not clean" in err and "profile/system.md" in err and "notes.txt" in err
    assert climb.git("branch", "--show-current").strip() == "main"
    assert not (climb.out / "fix_history.json").exists()


def test_an_edit_outside_the_profile_is_rejected(climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    outside = climb.repo / "scenarios" / "planted.txt"
    fixer = climb.fixer([[climb.restore(), f"outside:{outside}"], ["append:Be brief."]])
    code, _, err = _cli(_args(climb, fixer, "--rounds", "1"), capsys)
    assert code == 0, err
    r = json.loads((climb.out / "fix_history.json").read_text())["rounds"][0]
    assert r["outcome"] == "rejected" and "outside the profile: scenarios/planted.txt" in r["reason"]
    assert not outside.exists() and not (climb.profile / "tools" / "query_documents.md").exists()
    assert climb.git("status", "--porcelain").strip() == ""
