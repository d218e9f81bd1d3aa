"""Every file the gate writes next to a run goes through the scrubber (one writer for run-directory files)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay._util import MARKER
from assay.gate import GateOptions, hold
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.report import render_markdown
from assay.runs.rundir import write_artifact

SECRET = "planted-secret-value-0123456789"


def _run(root: Path, name: str, outcomes: dict[str, str]) -> tuple[Path, object]:
    sc = card(outcomes, run_id=name)
    d = root / name
    d.mkdir()
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    return d, sc


def _leaks(folder: Path) -> list[str]:
    """Files in ``folder`` holding the secret (the test's own hand-written scorecard.json aside)."""
    return [
        p.name
        for p in folder.iterdir()
        if p.name != "scorecard.json" or folder.name == "bl"
        if p.is_file() and SECRET in p.read_text(encoding="utf-8")
    ]


def test_comparison_gate_report_and_baseline_are_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_SERVICE_TOKEN", SECRET)
    case = f"leaky-{SECRET}"
    base, base_sc = _run(tmp_path, "base", {case: "PPP", "b": "PPP"})
    cur, cur_sc = _run(tmp_path, "cur", {case: "FFF", "b": "PPP"})
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"benchmark": "sim", "suite": "pr", "model": "sim-model",
                                   "judge_model": "sim-judge", "limits": {"min_passed": 2}}))  # fmt: skip
    common = dict(require_complete=False, force=True, noise=None, enforce=False)
    assert hold(base_sc, GateOptions(save_baseline=tmp_path / "bl", **common), run_dir=base).exit_code == 0
    verdict = hold(cur_sc, GateOptions(compare=base, expect=exp, **common), run_dir=cur)
    code = verdict.exit_code
    write_artifact(
        cur / "report.md", render_markdown(cur_sc, verdict=verdict)
    )  # as the engine's report writer
    assert code == 2
    written = {p.name for p in cur.iterdir()}
    assert {"comparison.json", "comparison.md", "gate.json", "report.md"} <= written
    assert _leaks(cur) == [] and _leaks(tmp_path / "bl") == []
    assert MARKER in (cur / "comparison.json").read_text() and MARKER in (cur / "report.md").read_text()


def test_assay_compare_writes_scrubbed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.cli._gate import compare_command

    monkeypatch.setenv("ASSAY_TEST_SERVICE_TOKEN", SECRET)
    base, _ = _run(tmp_path, "base", {f"x-{SECRET}": "PPP"})
    cur, _ = _run(tmp_path, "cur", {f"x-{SECRET}": "FFF"})
    result = CliRunner().invoke(compare_command, [str(base), str(cur)])
    assert result.exit_code == 2, result.output
    assert (cur / "comparison.md").is_file() and _leaks(cur) == []


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_proposed_expectations_are_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    from assay.gate._expect import Expectations, write_expectations

    monkeypatch.setenv("ASSAY_TEST_SERVICE_TOKEN", SECRET)
    out = tmp_path / f"exp{suffix}"
    write_expectations(
        Expectations(benchmark="sim", suite="pr", model=f"m-{SECRET}", limits={"min_passed": 1}), out
    )
    assert SECRET not in out.read_text() and MARKER in out.read_text()
