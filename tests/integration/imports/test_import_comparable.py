"""Imported runs compare only when their task, scorers, model and subject match; --allow-subject-change
compares different subjects case by case and says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli

FOREIGN = Path(__file__).parents[2] / "fixtures" / "foreign"


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _import(tool: str, path: Path, run: Path) -> Path:
    res = CliRunner().invoke(cli, ["import", tool, str(path), "--out", str(run)])
    assert res.exit_code == 0, res.output
    return run


def _compare(*args: str) -> tuple[int, dict]:
    res = CliRunner().invoke(cli, ["compare", *args, "--json"])
    return res.exit_code, json.loads(res.output)


def test_another_solver_is_refused_unless_the_subject_change_is_allowed(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="assay[inspect] (in the test extra) reads Inspect logs")
    good = _import("inspect", FOREIGN / "inspect" / "good.eval", tmp_path / "good")
    other = _import("inspect", FOREIGN / "inspect" / "other_solver.eval", tmp_path / "other")
    code, comp = _compare(str(good), str(other))
    assert code == 3 and comp["not_comparable"] == ["subject differs: baseline 'answer', current 'reply'"]
    code, comp = _compare(str(good), str(other), "--allow-subject-change")
    assert code == 0 and comp["comparable"]
    assert any("the subjects differ" in w and "'reply'" in w for w in comp["warnings"])
    assert {c["case_id"] for c in comp["cases"]} == {"s1", "s2", "s3", "s4"}  # paired by item


def test_another_model_is_refused_unless_allowed_and_the_allowed_comparison_still_finds_regressions(
    tmp_path: Path,
) -> None:
    swe = FOREIGN / "swebench" / "acme__agent-1.demo.json"
    base = _import("swebench", swe, tmp_path / "a")
    # the same summary as the harness names it for another model: only the subject differs
    renamed = tmp_path / "acme__agent-2.demo.json"
    shutil.copy(swe, renamed)
    cur = _import("swebench", renamed, tmp_path / "b")
    code, comp = _compare(str(base), str(cur))
    assert code == 3 and any(r.startswith("subject model differs") for r in comp["not_comparable"])
    code, comp = _compare(str(base), str(cur), "--allow-subject-change")
    assert code == 0 and comp["counts"].get("regressed", 0) == 0
    # a different task is never allowed
    card = json.loads((cur / "scorecard.json").read_text())
    card["suite"] = "another-task"
    (cur / "scorecard.json").write_text(json.dumps(card))
    code, comp = _compare(str(base), str(cur), "--allow-subject-change")
    assert code == 3 and any(r.startswith("suite differs") for r in comp["not_comparable"])
