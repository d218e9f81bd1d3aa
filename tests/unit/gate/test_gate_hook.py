"""gate.hold: what the engine does once after a run (compare, gate, save baseline), and what the eval
command prints of its verdict; the report renders the verdict (no section spliced in by a text marker)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from assay.errors import ConfigError, UsageError
from assay.gate import GateOptions, hold, print_verdict
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.report import render_markdown
from assay.runs.records import Scorecard


def finished_run(root: Path, name: str, sc: Scorecard) -> Path:
    d = root / name
    d.mkdir()
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    return d


def run_hook(run_dir: Path, sc: Scorecard, **kw) -> tuple[int, str]:
    """Hold the run as the engine does, write its report once with the verdict, print what the CLI prints."""
    buf = io.StringIO()
    verdict = hold(sc, GateOptions(**kw), run_dir=run_dir)
    (run_dir / "report.md").write_text(render_markdown(sc, verdict=verdict), encoding="utf-8")
    print_verdict(verdict, Console(file=buf, width=100, color_system=None))
    return verdict.exit_code, buf.getvalue()


def test_compare_gate_and_baseline_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    base_sc = card({"a": "PPP", "b": "PPP"}, run_id="base")
    base = finished_run(tmp_path, "base", base_sc)
    code, out = run_hook(base, base_sc, save_baseline=tmp_path / "bl")
    assert code == 0 and f"baseline saved to {tmp_path / 'bl'}" in out
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"benchmark": "sim", "suite": "pr", "model": "sim-model",
                                   "judge_model": "sim-judge", "limits": {"min_passed": 2}}))  # fmt: skip
    cur_sc = card({"a": "FFF", "b": "PPP"}, run_id="cur")
    cur = finished_run(tmp_path, "cur", cur_sc)
    code, out = run_hook(cur, cur_sc, compare=tmp_path / "bl", expect=exp)
    assert code == 2  # the comparison regressed; the gate is not enforced
    assert "REGRESSION: 1 regressed: a" in out and "gate missed" in out
    assert json.loads((cur / "comparison.json").read_text())["regressions"] == ["a"]
    assert json.loads((cur / "gate.json").read_text())["status"] == "missed"
    report = (cur / "report.md").read_text()
    assert report.startswith("# sim · pr · cur") and report.count("## Compared with baseline") == 1
    # holding and reporting again writes the section once more in place of the first, never a second one
    run_hook(cur, cur_sc, compare=tmp_path / "bl")
    assert (cur / "report.md").read_text().count("## Compared with baseline") == 1
    assert (cur / "comparison.md").read_text().startswith("## Compared with baseline")


def test_not_comparable_wins_over_regression(tmp_path: Path) -> None:
    bl_sc = card({"a": "PPP"}, run_id="bl", suite_version="1")
    bl = finished_run(tmp_path, "bl", bl_sc)
    cur_sc = card({"a": "FFF"}, run_id="cur", suite_version="2")
    code, out = run_hook(finished_run(tmp_path, "cur", cur_sc), cur_sc, compare=bl)
    assert code == 3 and "suite version differs: baseline '1', current '2'" in out


def test_require_complete_without_compare(tmp_path: Path) -> None:
    sc = card({"a": "PPP", "b": "I-I"}, run_id="r")
    code, out = run_hook(finished_run(tmp_path, "r", sc), sc, require_complete=True, save_baseline=None,
                         expect=None)  # fmt: skip
    assert code == 2 and "not measured: b" in out


def test_user_errors_raise(tmp_path: Path) -> None:
    sc = card({"a": "P"}, run_id="one")
    run = finished_run(tmp_path, "one", sc)
    with pytest.raises(UsageError, match="--force"):
        run_hook(run, sc, save_baseline=tmp_path / "bl")
    code, _ = run_hook(run, sc, save_baseline=tmp_path / "bl", force=True)
    assert code == 0 and (tmp_path / "bl" / "scorecard.json").is_file()
    with pytest.raises(ConfigError, match="no such run directory"):
        run_hook(run, sc, compare=tmp_path / "missing")
    with pytest.raises(ConfigError, match="expectations file not found"):
        run_hook(run, sc, expect=tmp_path / "missing.yaml")


def test_a_run_that_regressed_is_not_saved_as_the_baseline(tmp_path: Path) -> None:
    base_sc = card({"a": "PPP", "b": "PPP"}, run_id="base")
    base = finished_run(tmp_path, "base", base_sc)
    cur_sc = card({"a": "FFF", "b": "PPP"}, run_id="cur")
    cur = finished_run(tmp_path, "cur", cur_sc)
    code, out = run_hook(cur, cur_sc, compare=base, save_baseline=tmp_path / "bl")
    assert code == 2  # the regression's exit code is kept
    assert f"--save-baseline {tmp_path / 'bl'}: not saved: this run regressed" in out.replace("\n", " ")
    assert not (tmp_path / "bl").exists()


def test_require_complete_without_compare_treats_a_skip_as_an_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a case skipped with a reason counted as unmeasured, so --require-complete always failed it."""
    monkeypatch.chdir(tmp_path)
    sc = card({"a": "PP", "b": "SS"}, run_id="r")
    code, out = run_hook(finished_run(tmp_path, "r", sc), sc, require_complete=True)
    assert code == 0, out
    down = card({"a": "PP", "b": "II"}, run_id="d")
    code, out = run_hook(finished_run(tmp_path, "d", down), down, require_complete=True)
    assert code == 2 and "not measured: b" in out
