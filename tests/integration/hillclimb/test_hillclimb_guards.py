"""`assay hillclimb`'s refusals: a dirty tree (naming the files), a tasks option given to agent, an edit
that reaches outside the profile folder (rejected and undone); and the overfitting flag on a session whose
held-out gain is under half its train gain."""

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


def test_a_tasks_option_is_refused_for_agent(climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli([*_args(climb, climb.fixer([])), "--tasks-file", "tasks.json"], capsys)
    assert code == 1 and "--tasks-file: options of --benchmark tasks, not agent" in err
    assert climb.git("branch", "--show-current").strip() == "main"


def test_an_eval_option_pr_cannot_take_is_refused_before_the_branch(
    climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli([*_args(climb, climb.fixer([])), "--judge-model", "local/smollm2"], capsys)
    assert code == 1 and "--judge-model apply to --suite full" in err
    assert climb.git("branch", "--show-current").strip() == "main"


def test_dirty_tree_is_refused_naming_the_files(climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    (climb.profile / "system.md").write_text("changed\n")
    (climb.repo / "notes.txt").write_text("new\n")
    code, _, err = _cli(_args(climb, climb.fixer([[climb.restore()]])), capsys)
    assert code == 1
    assert "not clean" in err and "profile/system.md" in err and "notes.txt" in err
    assert climb.git("branch", "--show-current").strip() == "main"
    assert not (climb.out / "fix_history.json").exists()


def test_an_edit_outside_the_profile_is_rejected(
    small_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    climb = small_climb
    outside = climb.repo / "scenarios" / "planted.txt"
    fixer = climb.fixer([[climb.restore(), f"outside:{outside}"], ["append:Be brief."]])
    code, _, err = _cli(_args(climb, fixer, "--rounds", "1"), capsys)
    assert code == 0, err
    r = json.loads((climb.out / "fix_history.json").read_text())["rounds"][0]
    assert r["outcome"] == "rejected" and "outside the profile: scenarios/planted.txt" in r["reason"]
    assert not outside.exists() and not (climb.profile / "tools" / "query_documents.md").exists()
    assert climb.git("status", "--porcelain").strip() == ""


def test_a_held_out_gain_under_half_the_train_gain_is_flagged(
    small_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    # salt s2 holds out the one scenario the scripted agent answers wrong whatever the profile: the fix helps
    # train only (kept: held-out did not regress), and the session is flagged as overfitting
    c = small_climb
    code, out, err = _cli(_args(c, c.fixer([[c.restore()]]), "--rounds", "1", "--salt", "s2"), capsys)
    assert code == 0, err
    h = json.loads((c.out / "fix_history.json").read_text())
    assert h["split"]["heldout"] == ["dqa-handbook-deprecation-notice"]
    assert h["rounds"][0]["outcome"] == "kept" and h["train_gain"] == 1.0 and h["heldout_gain"] == 0.0
    assert h["overfitting"] is True and "under half the train gain" in h["overfitting_note"]
    assert "**OVERFITTING**" in out and "**OVERFITTING**" in (c.out / "report.md").read_text()


@pytest.mark.parametrize(
    ("flag", "why"), [("--max-wall", "at or over --max-wall 0 s"), ("--max-cost", "at or over --max-cost $0")]
)
def test_a_budget_stops_the_loop_before_a_round(
    small_climb: Climb, capsys: pytest.CaptureFixture[str], flag: str, why: str
) -> None:
    c = small_climb
    code, _, err = _cli(_args(c, c.fixer([[c.restore()]]), flag, "0"), capsys)
    assert code == 0, err
    h = json.loads((c.out / "fix_history.json").read_text())
    assert h["rounds"] == [] and why in h["stop_reason"] and h["status"] == "finished"
    assert h["baseline_train"]["pass_rate"] == 0.0 and h["rollup"]["document_qa"]
