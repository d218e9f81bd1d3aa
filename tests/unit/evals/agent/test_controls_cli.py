"""`assay eval agent controls` end to end on scripted judge models (the scripted provider, keyed replies): exit 0
for a faithful judge with both files written, 2 for a judge that passes everything (kappa between the two), 3 on
an outage, 1 on bad flags; `assay eval agent`'s own options are refused before the subcommand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assay.cli._main import main
from assay.evals.agent._controls_load import Control, default_controls_dir, load_controls, neutral_id
from assay.evals.agent._rubric import DIMENSION_NAMES, ZERO_RULE_NAMES


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_RESULTS_DIR", raising=False)


def _labelled(control: Control, label: str | None = None) -> str:
    """An answer that derives ``label`` (default the control's: failing dimension 0, or its zero rule found)."""
    label = label or control.label
    turns = []
    for t in control.turns:
        scores: dict[str, int | None] = dict.fromkeys(DIMENSION_NAMES, 4)
        findings = []
        if label == "FAIL" and t.index == (control.failing_turn or 1):
            if control.failing_dimension in ZERO_RULE_NAMES:
                findings.append({"rule": control.failing_dimension, "evidence": "quoted"})
            else:
                scores[control.failing_dimension or "correctness"] = 0
        turns.append({"turn": t.index, "scores": scores, "findings": findings})
    return json.dumps({"turns": turns, "verdict": label, "reason": "as labelled"})


def _script(tmp_path: Path, name: str, script: dict) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(script), encoding="utf-8")
    return f"scripted/{path}"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    out = capsys.readouterr()
    return int(exit_.value.code or 0), out.out + out.err


def test_faithful_passes_and_yes_man_fails_with_kappa(tmp_path: Path, capsys) -> None:
    controls = load_controls(default_controls_dir())
    faithful = _script(
        tmp_path,
        "faithful",
        {"replies": [{"match": neutral_id(c.id), "text": _labelled(c)} for c in controls]},
    )
    results = tmp_path / "results"
    code, out = _run(
        [
            "eval",
            "agent",
            "controls",
            "--judge-model",
            faithful,
            "--repeats",
            "2",
            "--temperature",
            "0.5",
            "--results-dir",
            str(results),
        ],
        capsys,
    )
    assert code == 0, out
    decided = [c for c in controls if not c.decided_by_code]
    n_pass, n_fail = sum(c.label == "PASS" for c in decided), sum(c.label == "FAIL" for c in decided)
    assert (
        "passed" in out
        and (
            f"judge-decided controls: {n_pass} PASS, {n_fail} FAIL ({2 * len(decided)} judgings): "
            "agreement 1.00 (PASS 1.00, FAIL 1.00), kappa with labels 1.00, self-consistency 1.00"
        )
        in out
    )
    assert f"apart: {len(controls) - len(decided)} controls decided by a failed code check" in out
    (folder,) = results.glob("controls-agent-*")
    saved = json.loads((folder / "controls.json").read_text())
    (record,) = saved["judges"]
    assert record["judge_model"] == faithful and record["rubric_version"] == "agent-1" and record["passed"]
    assert record["n_judgings"] == 2 * len(controls) and not record["constrained"]
    assert record["temperature"] == 0.5 and record["max_tokens"] == 2048  # eval agent's judge cap
    assert "## " + faithful + ": passed" in (folder / "report.md").read_text()

    yes_man = _script(
        tmp_path,
        "yes",
        {"replies": [{"match": neutral_id(c.id), "text": _labelled(c, "PASS")} for c in controls]},
    )
    code, out = _run(
        [
            *("eval", "agent", "controls", "--judge-model", faithful, "--judge-model", yes_man),
            *("--results-dir", str(results), "--controls", str(default_controls_dir())),
        ],
        capsys,
    )
    assert code == 2, out
    # the yes-man agrees on no FAIL control the judge decides (the code-decided ones no longer count)
    assert "NOT CALIBRATED" in out and "FAIL-agreement 0.00 < 0.90" in out
    assert "FAIL 0.00), kappa with labels 0.00" in out
    assert f"kappa {faithful} vs {yes_man}: " in out  # between judges: over every control
    assert len(list(results.glob("controls-agent-*"))) == 2


def test_outage_exits_3_and_bad_flags_exit_1(tmp_path: Path, capsys) -> None:
    down = _script(tmp_path, "down", {"replies": [], "default": {"error": "infra"}})
    code, out = _run(
        ["eval", "agent", "controls", "--judge-model", down, "--results-dir", str(tmp_path)], capsys
    )
    assert code == 3, out
    assert not list(tmp_path.glob("controls-agent-*"))  # nothing measured, no record left
    code, out = _run(["eval", "agent", "controls", "--judge-model", down, "--judge-model", down], capsys)
    assert code == 1 and "--judge-model" in out and "named twice" in out
    code, out = _run(["eval", "agent", "controls", "--repeats", "1"], capsys)
    assert code == 1 and "--repeats" in out
    code, out = _run(["eval", "agent", "controls", "--controls", str(tmp_path / "none")], capsys)
    assert code == 1 and "judge controls folder not found (--controls DIR)" in out
    code, out = _run(["eval", "agent", "--suite", "pr", "controls"], capsys)
    assert code == 1 and "--suite belong(s) to `assay eval agent`" in out
