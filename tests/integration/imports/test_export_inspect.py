"""`assay export inspect`: an assay run written as an Inspect log with Inspect's writer, read back by
Inspect's reader with the same samples and scores, and imported again to the same verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli, main
from assay.runs import latest_attempts, read_journal

pytest.importorskip("inspect_ai", reason="assay[inspect] (in the test extra) writes and reads Inspect logs")
FOREIGN = Path(__file__).parents[2] / "fixtures" / "foreign"


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _run(*argv: str) -> None:
    res = CliRunner().invoke(cli, list(argv))
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("tool", "source"),
    [
        ("promptfoo", "promptfoo/ratelimited.json"),
        ("inspect", "inspect/broken.eval"),
        ("tau2", "tau2/airline.json"),
    ],
)
def test_an_exported_run_reads_back_with_the_same_samples_and_scores(
    tmp_path: Path, tool: str, source: str
) -> None:
    from inspect_ai.log import read_eval_log

    run, log = tmp_path / "run", tmp_path / "run.eval"
    _run("import", tool, str(FOREIGN / source), "--out", str(run))
    _run("export", "inspect", str(run), "--out", str(log))
    attempts = latest_attempts(read_journal(run / "results.jsonl"))
    back = read_eval_log(str(log))
    assert {(s.id, s.epoch - 1) for s in back.samples} == set(attempts)
    for s in back.samples:
        a = attempts[(s.id, s.epoch - 1)]
        assert s.metadata["status"] == a.status.value
        if a.status in ("PASS", "FAIL", "ERROR", "TIMEOUT"):
            assert s.scores["assay"].value == ("C" if a.status == "PASS" else "I")
            assert {k: v.value for k, v in s.scores.items() if k != "assay"} == a.metrics
        else:  # not measured: no score at all, never a zero
            assert not s.scores
    # imported again, the measured attempts keep their verdicts
    again = tmp_path / "again"
    _run("import", "inspect", str(log), "--out", str(again))
    for b in read_journal(again / "results.jsonl"):
        a = attempts[b.key]
        assert (b.status == "PASS") == (a.status == "PASS") and (b.status == "ERROR") == (a.status == "ERROR")


def test_export_refuses_a_file_that_is_not_an_inspect_log_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    _run("import", "promptfoo", str(FOREIGN / "promptfoo/run1.json"), "--out", str(run))
    with pytest.raises(SystemExit) as exc:
        main(["export", "inspect", str(run), "--out", str(tmp_path / "run.txt")])
    assert exc.value.code == 1 and "expected a file ending .eval or .json" in capsys.readouterr().err
