"""A loop stopped by Ctrl-C or an outage resumes at the round and phase it was in, with the tree as it left it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
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


def _args(c: Climb, fixer: str, rounds: int) -> list[str]:
    return ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", fixer, "--out", str(c.out), "--rounds", str(rounds)]  # fmt: skip


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_ctrl_c_in_the_fixer_resumes_that_round(
    small_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    fixer = small_climb.fixer(
        [[small_climb.restore()], ["interrupt:"], ["append:Be brief."], ["append:Be kind."]]
    )
    code, _, err = _cli(_args(small_climb, fixer, 5), capsys)
    assert code == 130 and f"assay hillclimb --resume {small_climb.out}" in err
    h = json.loads((small_climb.out / "fix_history.json").read_text())
    assert h["status"] == "interrupted" and [r["phase"] for r in h["rounds"]] == ["done", "fixing"]
    assert h["rounds"][0]["outcome"] == "kept"
    measured = {p: _lines(p) for p in small_climb.out.glob("*/*/results.jsonl")}

    code, _, err = _cli(["hillclimb", "--resume", str(small_climb.out)], capsys)
    assert code == 0, err
    h = json.loads((small_climb.out / "fix_history.json").read_text())
    assert [(r["round"], r["outcome"]) for r in h["rounds"]] == [
        (1, "kept"),
        (2, "reverted"),
        (3, "reverted"),
    ]
    assert h["status"] == "finished" and h["stop_reason"].startswith("2 flat rounds")
    # the baseline and round 1 were not measured again
    assert {p: _lines(p) for p in measured} == measured


def test_a_measurement_cut_short_resumes_where_it_stopped(
    small_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(_args(small_climb, small_climb.fixer([[small_climb.restore()]]), 1), capsys)
    assert code == 0, err
    # put the loop back as a kill mid-way through round 1's held-out run leaves it: the edit applied, not
    # committed; two attempts of the held-out run journalled, no scorecard
    path = small_climb.out / "fix_history.json"
    h = json.loads(path.read_text())
    r = h["rounds"][0]
    assert r["outcome"] == "kept"
    subprocess.run(["git", "-C", str(small_climb.repo), "reset", "-q", "HEAD~1"], check=True)
    r.update(
        phase="measuring", outcome=None, reason="", commit=None, heldout_after=None, heldout_verdict=None
    )
    r["train_verdict"] = None
    h.update(status="interrupted", stop_reason="", rollup={}, train_gain=None, heldout_gain=None)
    path.write_text(json.dumps(h))
    held = small_climb.out / "round-1" / "heldout"
    journal = held / "results.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:2]))
    (held / "scorecard.json").unlink()
    train_lines = _lines(small_climb.out / "round-1" / "train" / "results.jsonl")

    code, _, err = _cli(["hillclimb", "--resume", str(small_climb.out)], capsys)
    assert code == 0, err
    h = json.loads(path.read_text())
    assert h["rounds"][0]["outcome"] == "kept" and h["rounds"][0]["commit"]
    assert h["stop_reason"].startswith("1 round(s) done")
    # every held-out attempt measured exactly once; the train run was not run again
    rows = [json.loads(line) for line in journal.read_text().splitlines()]
    assert len(rows) == 3 * len(h["split"]["heldout"])
    assert len({(x["case_id"], x["iteration"]) for x in rows}) == len(rows)
    assert _lines(small_climb.out / "round-1" / "train" / "results.jsonl") == train_lines
    assert small_climb.git("status", "--porcelain").strip() == ""


def test_resume_refuses_files_changed_since(small_climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    fixer = small_climb.fixer([["interrupt:"]])
    code, _, _ = _cli(_args(small_climb, fixer, 2), capsys)
    assert code == 130
    (small_climb.repo / "scenarios" / "stray.txt").write_text("x\n")
    code, _, err = _cli(["hillclimb", "--resume", str(small_climb.out)], capsys)
    assert code == 1 and "files changed since the loop stopped: scenarios/stray.txt" in err
