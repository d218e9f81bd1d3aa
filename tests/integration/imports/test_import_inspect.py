"""`assay import inspect`: real Inspect AI logs (tests/fixtures/foreign/inspect, made by make_logs.py with
Inspect's mockllm model) become run directories that compare, propose and gate read unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli, main
from assay.runs import load_meta, load_scorecard, read_journal

pytest.importorskip("inspect_ai", reason="assay[inspect] (in the test extra) reads Inspect logs")

LOGS = Path(__file__).parents[2] / "fixtures" / "foreign" / "inspect"


def _import(tmp: Path, name: str, out: str | None = None) -> tuple[int, str, Path]:
    run = tmp / (out or name.replace(".", "-"))
    res = CliRunner().invoke(cli, ["import", "inspect", str(LOGS / name), "--out", str(run)])
    return res.exit_code, res.output, run


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def test_each_sample_and_epoch_is_an_attempt_scored_as_inspect_defines(tmp_path: Path) -> None:
    code, out, run = _import(tmp_path, "good.eval")
    assert code == 0, out
    attempts = {(a.case_id, a.iteration): a for a in read_journal(run / "results.jsonl")}
    assert len(attempts) == 8  # 4 samples x 2 epochs
    # match (the first scorer) decides the status; every scorer is a metric, C 1.0 and I 0.0
    assert attempts[("s1", 0)].status == "PASS" and attempts[("s1", 0)].metrics == {
        "match": 1.0,
        "includes": 1.0,
    }
    assert attempts[("s3", 1)].status == "FAIL" and attempts[("s3", 1)].metrics == {
        "match": 0.0,
        "includes": 1.0,
    }
    card = load_scorecard(run)
    assert card.iterations == 2 and card.summary.pass_rate == 0.5
    assert (
        card.summary.metrics["includes"].value == 0.75
        and card.summary.metrics["includes"].kind == "proportion"
    )
    meta = load_meta(run)
    assert (meta.benchmark, meta.suite, meta.config.model, meta.config.subject) == (
        "import-inspect",
        "mock_qa",
        "mockllm/model",
        "answer",
    )
    assert meta.options["import"]["tool_version"] and meta.options["import"]["epochs"] == 2
    assert (run / "report.md").read_text().count("## Imported result") == 1


def test_the_report_says_what_changes_the_result_can_show(tmp_path: Path) -> None:
    run = tmp_path / "run"
    res = CliRunner().invoke(
        cli, ["import", "inspect", str(LOGS / "good.eval"), "--out", str(run), "--detect", "0.03"]
    )
    assert res.exit_code == 0, res.output
    report = (run / "report.md").read_text()
    # 4 samples (the epochs repeat them: not independent items) at a pass rate of 0.5
    assert "pass rate: 0.5 over 4 items; the smallest change the gate can detect is ±0.943" in report
    assert "a change of 0.03 needs about 2201 items" in report


def test_eval_and_json_logs_read_alike_and_one_file_is_one_run(tmp_path: Path) -> None:
    _, _, from_eval = _import(tmp_path, "good.eval")
    _, _, from_json = _import(tmp_path, "good.json")
    a = {(x.case_id, x.iteration): (x.status, x.metrics) for x in read_journal(from_eval / "results.jsonl")}
    b = {(x.case_id, x.iteration): (x.status, x.metrics) for x in read_journal(from_json / "results.jsonl")}
    assert a == b
    _, _, again = _import(tmp_path, "good.eval", out="again")
    assert load_meta(again).run_id == load_meta(from_eval).run_id
    assert (again / "results.jsonl").read_bytes() == (from_eval / "results.jsonl").read_bytes()
    assert load_meta(from_json).run_id != load_meta(from_eval).run_id


def test_a_broken_solver_is_a_regression_compare_reports(tmp_path: Path) -> None:
    _, _, good = _import(tmp_path, "good.eval")
    code, out, broken = _import(tmp_path, "broken.eval")
    assert code == 0, out
    errors = [a for a in read_journal(broken / "results.jsonl") if a.status == "ERROR"]
    assert {a.case_id for a in errors} == {"s2"} and "lost its tool" in errors[0].error.message
    res = CliRunner().invoke(cli, ["compare", str(good), str(broken), "--json"])
    assert res.exit_code == 2, res.output
    comp = json.loads(res.output)
    assert sorted(c["case_id"] for c in comp["cases"] if c["bucket"] == "regressed") == ["s1", "s2"]
    # the honest case: the same solver's two logs compare clean
    _, _, same = _import(tmp_path, "good.json")
    assert CliRunner().invoke(cli, ["compare", str(good), str(same)]).exit_code == 0


def test_propose_on_good_runs_then_gate_enforce(tmp_path: Path) -> None:
    runs = [_import(tmp_path, n)[2] for n in ("good.eval", "good.json")]
    exp = tmp_path / "exp.yaml"
    assert CliRunner().invoke(cli, ["propose", *map(str, runs), "--out", str(exp)]).exit_code == 0
    assert CliRunner().invoke(cli, ["gate", str(runs[0]), "--expect", str(exp), "--enforce"]).exit_code == 0
    broken = _import(tmp_path, "broken.eval")[2]
    assert CliRunner().invoke(cli, ["gate", str(broken), "--expect", str(exp), "--enforce"]).exit_code == 2


def test_a_stopped_log_keeps_its_status_and_its_unfinished_samples_are_not_run(tmp_path: Path) -> None:
    code, out, run = _import(tmp_path, "stopped.json")
    assert code == 0, out
    card = load_scorecard(run)
    assert {k: v for k, v in card.summary.counts.items() if v} == {"FAIL": 1, "ERROR": 1, "NOT_RUN": 6}
    assert not card.complete
    not_run = [a for a in read_journal(run / "results.jsonl") if a.status == "NOT_RUN"]
    # s3 was cancelled with the run: not the solver's failure
    assert any(a.case_id == "s3" and a.skip_reason.startswith("cancelled") for a in not_run)
    assert "the tool's status: error" in (run / "report.md").read_text()


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        (
            "cut.eval",
            lambda p: p.write_bytes((LOGS / "good.eval").read_bytes()[:4000]),
            "not an Inspect AI log",
        ),
        ("other.json", lambda p: p.write_text('{"results": [], "version": 3}'), "not an Inspect AI log"),
        ("notes.json", lambda p: p.write_text("not json at all"), "not an Inspect AI log"),
    ],
)
def test_bad_input_is_one_line_exit_1_and_nothing_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    make: Callable[[Path], object],
    expected: str,
) -> None:
    bad = tmp_path / name
    make(bad)
    run = tmp_path / "run"
    line = _fails(capsys, ["import", "inspect", str(bad), "--out", str(run)])
    assert str(bad) in line and expected in line, line
    assert not run.exists()


def _fails(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one stderr line of a command that exits 1 (through the console entry point)."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 1 and len(err.splitlines()) == 1, err
    return err


def test_unknown_tool_and_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "unknown tool 'nosuchtool'" in _fails(capsys, ["import", "nosuchtool", str(LOGS / "good.eval")])
    line = _fails(capsys, ["import", "inspect", str(tmp_path / "gone.eval"), "--out", str(tmp_path / "r")])
    assert "gone.eval: no such file" in line and not (tmp_path / "r").exists()


def test_a_pass_threshold_moves_the_line_of_a_numeric_score(tmp_path: Path) -> None:
    """The broken solver's log: I (0) scores fail at full credit and pass at a threshold of 0; a sample that
    raised stays an ERROR whatever the line."""
    _, _, full = _import(tmp_path, "broken.eval")
    run = tmp_path / "zero"
    res = CliRunner().invoke(
        cli, ["import", "inspect", str(LOGS / "broken.eval"), "--pass-threshold", "0", "--out", str(run)]
    )
    assert res.exit_code == 0, res.output
    before = {a.key: a.status.value for a in read_journal(full / "results.jsonl")}
    after = {a.key: a.status.value for a in read_journal(run / "results.jsonl")}
    assert "FAIL" in before.values() and "FAIL" not in after.values()
    assert {k for k, v in before.items() if v == "ERROR"} == {k for k, v in after.items() if v == "ERROR"}
    meta = load_meta(run)
    assert meta.options["import"]["pass_threshold"] == 0.0 and meta.suite_version.endswith(
        "pass at score >= 0"
    )
    assert "is at least 0 (--pass-threshold)" in (run / "report.md").read_text()
