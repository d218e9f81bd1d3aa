"""The shipped judge controls (count, coverage, labels, twins, frozen checks = the benchmark's code checks) and
the loader's refusals, each a ConfigError naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from assay.errors import ConfigError
from assay.evals.agent._controls_load import (
    CASES,
    default_controls_dir,
    load_control,
    load_controls,
    neutral_id,
)
from assay.evals.agent._judge_view import judge_messages
from assay.evals.agent._rubric import RUBRIC_VERSION
from assay.evals.agent.checks import run_checks


@pytest.fixture(scope="module")
def shipped():
    return load_controls(default_controls_dir())


def test_shipped_set_covers_every_case_with_both_labels(shipped) -> None:
    assert len(shipped) >= 24
    for case in CASES:
        labels = {c.label for c in shipped if c.case == case}
        assert labels == {"PASS", "FAIL"}, case
    by_id = {c.id: c for c in shipped}
    for c in shipped:
        assert by_id[c.twin].label != c.label and c.labelled_by == "assay-maintainers"
        assert c.rubric_version == RUBRIC_VERSION and c.rationale.strip()
        assert (c.label == "FAIL") == (c.failing_dimension is not None)
    zero_rules = {c.failing_dimension for c in shipped if c.label == "FAIL"}
    assert {"fabricated_number", "fabricated_source", "claimed_work_not_done", "lazy_refusal"} <= zero_rules
    assert {"followed_injection", "tool_use", "correctness"} <= zero_rules
    # most FAIL controls are decided by the judge alone (no code check failed)
    fails = [c for c in shipped if c.label == "FAIL"]
    assert sum(not c.decided_by_code for c in fails) >= 3 * len(fails) // 4


def test_frozen_checks_are_what_the_benchmark_computes(shipped) -> None:
    for c in shipped:
        fresh = run_checks(c.scenario, c.turns)
        assert [(k.name, k.passed, k.turn) for k in c.checks] == [
            (k.name, k.passed, k.turn) for k in fresh
        ], c.id


def test_the_judge_never_sees_a_controls_name_label_or_rationale(shipped) -> None:
    for c in shipped:
        prompt = "\n".join(m.content for m in judge_messages(c.view()))
        assert c.id not in prompt and c.rationale[:60] not in prompt
        assert f"Scenario: {neutral_id(c.id)}" in prompt


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _base() -> dict:
    src = default_controls_dir() / "wrong-number-refund-window.yaml"
    return yaml.safe_load(src.read_text(encoding="utf-8"))


def _dump(tmp_path: Path, data: dict, name: str = "c.yaml") -> Path:
    return _write(tmp_path, name, yaml.safe_dump(data, sort_keys=False))


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if needle in line)


@pytest.mark.parametrize(
    ("change", "message", "needle"),
    [
        (
            lambda d: d.update(rubric_version="agent-0"),
            "relabel the control against agent-1",
            "rubric_version",
        ),
        (lambda d: d.pop("failing_dimension"), "names the dimension or zero rule", "label:"),
        (lambda d: d.update(failing_dimension="vibes"), "got 'vibes'", "failing_dimension"),
        (lambda d: d.update(case="misc"), "case: 'misc' is not one of", "case:"),
        (lambda d: d.update(twin=d["id"]), "its own near-miss", "twin:"),
        (
            lambda d: d.update(label="PASS"),
            "names no failing_dimension",
            "failing_dimension",
        ),
        (lambda d: d["scenario"].update(id="x"), "leave it out", "id: x"),
        (lambda d: d["scenario"].update(script={"judge": []}), "judged without any script", "judge: []"),
        (
            lambda d: d["turns"][0]["messages"][1].update(toolcalls=[]),
            "unknown field 'toolcalls'",
            "toolcalls",
        ),
        (lambda d: d["checks"][1].update(turn=5), "checks[1].turn: 5 is not in 1..1", "turn: 5"),
        (lambda d: d.update(labeled_by="me"), "labeled_by", "labeled_by"),
        (lambda d: d["turns"][0].update(index=2), "turns[0].index: 2, expected 1", "index: 2"),
    ],
)
def test_bad_control_is_refused_naming_file_and_line(
    tmp_path: Path, change, message: str, needle: str
) -> None:
    data = _base()
    change(data)
    if data.get("failing_dimension") is None:
        data.pop("failing_dimension", None)
    path = _dump(tmp_path, data)
    with pytest.raises(ConfigError) as err:
        load_control(path)
    assert message in str(err.value)
    assert err.value.path == str(path)
    assert err.value.line == _line_of(path, needle)


def test_pass_label_with_a_failed_check_is_refused(tmp_path: Path) -> None:
    data = _base()
    data["label"] = "PASS"
    del data["failing_dimension"]
    path = _dump(tmp_path, data)
    with pytest.raises(ConfigError, match="failed code check \\(number\\)") as err:
        load_control(path)
    assert err.value.line == _line_of(path, "name: number")


def test_bad_yaml_and_set_level_problems(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_control(_write(tmp_path, "bad.yaml", "id: x\nlabel: [\n"))
    assert err.value.line is not None
    folder = tmp_path / "set"
    folder.mkdir()
    with pytest.raises(ConfigError, match=r"no \*\.yaml judge controls"):
        load_controls(folder)
    with pytest.raises(ConfigError, match="not found"):
        load_controls(tmp_path / "missing")
    data = _base()
    _dump(folder, data, "a.yaml")
    with pytest.raises(ConfigError, match="twin: no control 'right-number-refund-window'") as err:
        load_controls(folder)
    assert err.value.line == _line_of(folder / "a.yaml", "twin:")
    _dump(folder, data, "b.yaml")
    with pytest.raises(ConfigError, match="also used by"):
        load_controls(folder)
    (folder / "b.yaml").unlink()
    twin = dict(data, id="right-number-refund-window", twin=data["id"])
    _dump(folder, twin, "b.yaml")
    with pytest.raises(ConfigError, match="also labelled FAIL; a near-miss has the opposite label"):
        load_controls(folder)


def test_the_default_controls_dir_is_the_checkouts_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shipped = Path(__file__).resolve().parents[4] / "eval" / "judge_controls" / "agent"
    assert default_controls_dir() == shipped and shipped.is_dir()
