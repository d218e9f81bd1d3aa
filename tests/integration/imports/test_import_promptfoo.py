"""`assay import promptfoo`: results written by promptfoo itself (tests/fixtures/foreign/promptfoo, made by
make_results.sh with an exec: provider): three runs of one config, and one whose provider was rate-limited."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli, main
from assay.runs import load_meta, load_scorecard, read_journal

PF = Path(__file__).parents[2] / "fixtures" / "foreign" / "promptfoo"


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _import(name: str, tmp: Path) -> Path:
    run = tmp / name
    res = CliRunner().invoke(cli, ["import", "promptfoo", str(PF / f"{name}.json"), "--out", str(run)])
    assert res.exit_code == 0, res.output
    return run


def test_each_test_prompt_and_provider_is_an_attempt_with_its_named_metrics(tmp_path: Path) -> None:
    run = _import("run1", tmp_path)
    by_id = {a.case_id: a for a in read_journal(run / "results.jsonl")}
    assert len(by_id) == 8  # 4 tests x 2 prompts x 1 provider
    assert by_id["test0.prompt0.adder"].status == "PASS"
    wrong = by_id["test3.prompt1.adder"]  # the provider adds 4 + 4 wrong: one assertion of two fails
    assert (
        wrong.status == "FAIL" and wrong.score == 0.5 and wrong.metrics == {"correct": 0.0, "phrasing": 1.0}
    )
    meta = load_meta(run)
    assert (
        meta.config.model == "exec: python3 provider.py"
        and meta.options["import"]["tool_version"] == "0.121.20"
    )
    assert " " not in meta.run_id


def test_a_provider_error_is_an_infra_error_never_a_fail(tmp_path: Path) -> None:
    run = _import("ratelimited", tmp_path)
    limited = [a for a in read_journal(run / "results.jsonl") if a.case_id.startswith("test1.")]
    assert {a.status.value for a in limited} == {"INFRA_ERROR"} and "429" in limited[0].error.message
    card = load_scorecard(run)
    assert card.summary.counts["FAIL"] == 2 and card.summary.measured == 6  # not counted against the subject
    # compared with a clean run it is no regression (the rate-limited items are not measured)
    res = CliRunner().invoke(cli, ["compare", str(_import("run1", tmp_path)), str(run)])
    assert res.exit_code == 0, res.output


def test_propose_on_two_runs_then_gate_the_third_enforced(tmp_path: Path) -> None:
    runs = [_import(f"run{n}", tmp_path) for n in (1, 2, 3)]
    exp = tmp_path / "exp.yaml"
    res = CliRunner().invoke(cli, ["propose", str(runs[0]), str(runs[1]), "--out", str(exp)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["gate", str(runs[2]), "--expect", str(exp), "--enforce"])
    assert res.exit_code == 0, res.output
    # the same limits catch the rate-limited run as unmeasured under --enforce, not as a worse subject
    res = CliRunner().invoke(
        cli, ["gate", str(_import("ratelimited", tmp_path)), "--expect", str(exp), "--enforce"]
    )
    assert res.exit_code == 2, res.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"results": {"version": 2, "results": []}}', "it says results version 2"),
        ('{"evalId": "x"}', "it has no results.results list"),
        ("[1, 2", "a promptfoo results file"),
    ],
)
def test_another_version_or_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    bad = tmp_path / "results.json"
    bad.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["import", "promptfoo", str(bad), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 1 and len(err.splitlines()) == 1 and str(bad) in err and expected in err, err
    assert not (tmp_path / "run").exists()
