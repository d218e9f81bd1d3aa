"""The controls lane (`assay eval agent controls --if-changed`): it calibrates a judge model with no record, then
stays quiet while nothing changed, and runs again when the judge prompt, the rubric (even without a version bump),
the labelled controls or the judge model changes; a standing failed record keeps exiting 2. The lane's settings come
from the tiers file and a bad lane is a clear error naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_controls_cli import _labelled, _run, _script

from assay.errors import ConfigError
from assay.evals.agent import _rubric
from assay.evals.agent._controls_load import default_controls_dir, load_controls, neutral_id
from assay.evals.agent.tiers import load_tiers

PAIRS = 3  # near-miss pairs copied into the test's own control set (fast)


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_RESULTS_DIR", raising=False)


def _controls(tmp_path: Path) -> Path:
    folder = tmp_path / "controls"
    folder.mkdir()
    chosen: set[str] = set()
    shipped = {c.id: c for c in load_controls(default_controls_dir())}
    for c in shipped.values():
        if len(chosen) < 2 * PAIRS and c.id not in chosen:
            chosen |= {c.id, c.twin or c.id}
    while more := {shipped[c].twin for c in chosen} - chosen:  # a twin's own twin is needed too
        chosen |= more
    for path in default_controls_dir().glob("*.yaml"):
        if path.stem in chosen:
            shutil.copy(path, folder / path.name)
    return folder


def _tiers(tmp_path: Path, judges: list[str], **extra: object) -> Path:
    path = tmp_path / "ci_tiers.json"
    lane = {"description": "judge calibration", "judge_models": judges, "repeats": 2, **extra}
    path.write_text(json.dumps({"tiers": {"smoke": {"scenarios": []}}, "lanes": {"controls": lane}}))
    return path


def _judge(tmp_path: Path, name: str, label: str | None = None) -> str:
    controls = load_controls(default_controls_dir())
    replies = [{"match": neutral_id(c.id), "text": _labelled(c, label)} for c in controls]
    return _script(tmp_path, name, {"replies": replies})


def _lane(tmp_path: Path, tiers: Path, controls: Path, capsys, *more: str) -> tuple[int, str]:
    argv = ["eval", "agent", "controls", "--if-changed", "--tiers", str(tiers), "--controls", str(controls)]
    return _run([*argv, "--results-dir", str(tmp_path / "results"), *more], capsys)


def _records(tmp_path: Path) -> int:
    return len(list((tmp_path / "results").glob("controls-agent-*")))


def test_lane_runs_on_each_change_and_not_otherwise(tmp_path: Path, capsys, monkeypatch) -> None:
    faithful = _judge(tmp_path, "faithful")
    tiers, controls = _tiers(tmp_path, [faithful]), _controls(tmp_path)

    code, out = _lane(tmp_path, tiers, controls, capsys)
    assert code == 0 and "calibration due: no calibration of" in out and _records(tmp_path) == 1, out
    saved = json.loads(next((tmp_path / "results").glob("controls-agent-*/controls.json")).read_text())
    assert saved["judges"][0]["repeats"] == 2  # the lane's repeats, not the flag's default
    assert saved["judges"][0]["rubric_digest"] == _rubric.rubric_digest()

    code, out = _lane(tmp_path, tiers, controls, capsys)
    assert code == 0 and "unchanged since its calibration" in out and "passed" in out, out
    assert _records(tmp_path) == 1  # nothing judged again

    with monkeypatch.context() as m:  # the rubric's content changes, its version does not
        m.setattr(_rubric, "PASS_THRESHOLD", 0.8)
        code, out = _lane(tmp_path, tiers, controls, capsys)
    assert code == 0 and "the rubric changed" in out and _records(tmp_path) == 2, out

    with monkeypatch.context() as m:
        m.setattr("assay.evals.agent._controls_lane.judge_prompt_digest", lambda: "f" * 64)
        code, out = _lane(tmp_path, tiers, controls, capsys)
    assert "the judge prompt changed" in out and _records(tmp_path) == 3, out

    gone = load_controls(controls)[0]
    for cid in (gone.id, gone.twin):
        (controls / f"{cid}.yaml").unlink()
    code, out = _lane(tmp_path, tiers, controls, capsys)
    assert code == 0 and "the labelled controls changed" in out and _records(tmp_path) == 4, out

    other = _judge(tmp_path, "faithful-too")  # the judge model changes: a name with no record
    code, out = _lane(tmp_path, _tiers(tmp_path, [faithful, other]), controls, capsys)
    assert code == 0 and _records(tmp_path) == 5, out
    assert f"{other}: calibration due" in out and f"{faithful}: unchanged" in out


def test_a_failed_calibration_keeps_failing_until_something_changes(tmp_path: Path, capsys) -> None:
    yes_man = _judge(tmp_path, "yes", "PASS")
    tiers, controls = _tiers(tmp_path, [yes_man]), _controls(tmp_path)
    code, out = _lane(tmp_path, tiers, controls, capsys)
    assert code == 2 and "NOT CALIBRATED" in out, out
    code, out = _lane(tmp_path, tiers, controls, capsys)
    assert code == 2 and "unchanged since its calibration" in out and "FAIL-agreement" in out, out
    assert _records(tmp_path) == 1


def test_a_judge_model_flag_wins_over_the_lane(tmp_path: Path, capsys) -> None:
    faithful = _judge(tmp_path, "faithful")
    tiers, controls = _tiers(tmp_path, [_judge(tmp_path, "yes", "PASS")]), _controls(tmp_path)
    code, out = _lane(tmp_path, tiers, controls, capsys, "--judge-model", faithful)
    assert code == 0 and faithful in out and "yes.yaml" not in out, out


def test_bad_lane_settings_name_the_file(tmp_path: Path, capsys) -> None:
    with pytest.raises(ConfigError, match="judge_models must be a non-empty list") as err:
        load_tiers(_tiers(tmp_path, []))
    assert str(tmp_path / "ci_tiers.json") in str(err.value)
    with pytest.raises(ConfigError, match=r"lanes\.controls: unknown key"):
        load_tiers(_tiers(tmp_path, ["local/smollm2"], when="always"))
    with pytest.raises(ConfigError, match="repeats must be an integer of 2 or more"):
        load_tiers(_tiers(tmp_path, ["local/smollm2"], repeats=1))
    path = tmp_path / "lanes.json"
    path.write_text(json.dumps({"tiers": {"smoke": {"scenarios": []}}, "lanes": {"nightly": {}}}))
    with pytest.raises(ConfigError, match="unknown lane"):
        load_tiers(path)
    code, out = _run(["eval", "agent", "controls", "--tiers", str(path)], capsys)
    assert code == 1 and "--tiers is read only with --if-changed" in out


def test_the_shipped_lane_names_a_judge_model() -> None:
    lane = load_tiers(Path(__file__).resolve().parents[4] / "eval" / "ci_tiers.json").controls_lane
    assert lane is not None and lane.judge_models and lane.repeats >= 2


def test_the_shipped_lane_has_a_committed_record_of_each_judge_model() -> None:
    """What `assay ci plan` holds the judge prompt, rubric and controls against: a real run's record of each
    judge model the lane names (whether it is current is what the plan decides, not this test)."""
    from assay.evals.agent._controls import iter_records

    root = Path(__file__).resolve().parents[4]
    lane = load_tiers(root / "eval" / "ci_tiers.json").controls_lane
    assert lane is not None and lane.records
    recorded = {r.judge_model: r for _, r in iter_records(root / lane.records)}
    for model in lane.judge_models:
        record = recorded[model]
        assert record.n_judgings == record.repeats * record.n_controls and record.usage.output_tokens > 0
        assert record.judge_decided_pass and record.judge_decided_fail  # a record of the judge-decided rule
