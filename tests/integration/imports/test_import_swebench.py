"""`assay import swebench`: the run summary the harness's own make_run_report wrote (tests/fixtures/foreign/
swebench, made by make_report.py), with the report.json files its get_eval_report wrote."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli, main
from assay.runs import load_meta, load_scorecard, read_journal

HERE = Path(__file__).parents[2] / "fixtures" / "foreign"
SWE = HERE / "swebench"
SUMMARY = SWE / "acme__agent-1.demo.json"


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def test_each_outcome_of_the_summary_is_its_status(tmp_path: Path) -> None:
    run = tmp_path / "run"
    reports = sorted(map(str, SWE.glob("*.report.json")))
    res = CliRunner().invoke(cli, ["import", "swebench", str(SUMMARY), *reports, "--out", str(run)])
    assert res.exit_code == 0, res.output
    by_id = {a.case_id: a for a in read_journal(run / "results.jsonl")}
    assert {k: v.status.value for k, v in by_id.items()} == {
        "psf__requests-1": "PASS",  # resolved
        "psf__requests-2": "FAIL",  # unresolved
        "psf__requests-3": "ERROR",  # the evaluation broke
        "psf__requests-4": "FAIL",  # empty patch
        "psf__requests-5": "NOT_RUN",  # not submitted
    }
    assert by_id["psf__requests-4"].details["outcome"] == "empty patch"
    # the report.json files give the share of FAIL_TO_PASS / PASS_TO_PASS tests that passed
    assert by_id["psf__requests-2"].metrics == {"fail_to_pass": 0.0, "pass_to_pass": 1.0}
    card = load_scorecard(run)
    assert card.summary.measured == 4 and card.summary.pass_rate == 0.25 and not card.complete
    meta = load_meta(run)
    assert meta.config.model == "acme/agent-1" and meta.options["import"]["swebench_run_id"] == "demo"


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (
            lambda p: p.write_text(
                '{"schema_version": 3, "resolved_ids": [], "unresolved_ids": [], "error_ids": []}'
            ),
            "it says schema_version 3",
        ),
        (lambda p: p.write_bytes((HERE / "inspect" / "good.json").read_bytes()), "it has no resolved_ids"),
        (lambda p: p.write_text('{"resolved_ids": ['), "a SWE-bench run summary"),
    ],
)
def test_a_file_that_is_not_a_summary_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make, expected
) -> None:
    bad = tmp_path / "m.run.json"
    make(bad)
    with pytest.raises(SystemExit) as exc:
        main(["import", "swebench", str(bad), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 1 and len(err.splitlines()) == 1 and str(bad) in err and expected in err, err
    assert not (tmp_path / "run").exists()
