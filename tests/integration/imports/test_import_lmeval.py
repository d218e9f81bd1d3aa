"""`assay import lm-eval`: results and samples written by lm-evaluation-harness itself (tests/fixtures/foreign/
lm-eval, made by make_results.sh with its dummy model on an 8-question task), two runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli, main
from assay.runs import load_scorecard, read_journal

LM = Path(__file__).parents[2] / "fixtures" / "foreign" / "lm-eval"


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _files(run: str) -> tuple[Path, list[Path]]:
    (results,) = (LM / run).glob("results_*.json")
    return results, sorted((LM / run).glob("samples_*.jsonl"))


def _import(tmp: Path, name: str, *paths: Path) -> Path:
    out = tmp / name
    res = CliRunner().invoke(cli, ["import", "lm-eval", *map(str, paths), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_with_samples_each_document_is_an_attempt_paired_across_runs(tmp_path: Path) -> None:
    results, samples = _files("run1")
    run = _import(tmp_path, "a", results, *samples)
    attempts = read_journal(run / "results.jsonl")
    assert len(attempts) == 8 and {a.case_id.split("/")[0] for a in attempts} == {"tiny_arith"}
    for a in attempts:  # acc of one document is 0 or 1: it decides the status
        assert a.status == ("PASS" if a.metrics["acc"] == 1.0 else "FAIL")
    card = load_scorecard(run)
    # the run's accuracy is lm-eval's own
    acc = json.loads(results.read_text())["results"]["tiny_arith"]["acc,none"]
    assert card.summary.pass_rate == pytest.approx(acc)
    other = _import(tmp_path, "b", *(lambda r, s: [r, *s])(*_files("run2")))
    res = CliRunner().invoke(cli, ["compare", str(run), str(other), "--json"])
    comp = json.loads(res.output)
    assert res.exit_code in (0, 2) and len(comp["cases"]) == 8  # compared document by document


def test_without_samples_the_aggregates_with_their_stderr_and_no_items(tmp_path: Path) -> None:
    results, _ = _files("run1")
    run = _import(tmp_path, "agg", results)
    card = load_scorecard(run)
    acc = card.summary.metrics["tiny_arith/acc"]
    data = json.loads(results.read_text())["results"]["tiny_arith"]
    assert acc.value == pytest.approx(data["acc,none"]) and acc.n == 8 and acc.kind == "proportion"
    assert acc.low == pytest.approx(data["acc,none"] - 1.959964 * data["acc_stderr,none"])
    assert card.cases == [] and "aggregate metrics only" in (run / "report.md").read_text()
    # a comparison of two such runs compares the aggregates and says why no item is paired
    other = _import(tmp_path, "agg2", _files("run2")[0])
    comp = json.loads(CliRunner().invoke(cli, ["compare", str(run), str(other), "--json"]).output)
    assert comp["cases"] == [] and any("has no items" in w and "--log_samples" in w for w in comp["warnings"])
    assert [m["name"] for m in comp["metrics"]] == ["tiny_arith/acc"]


def test_a_stderr_of_na_is_unknown_not_zero(tmp_path: Path) -> None:
    results, _ = _files("run1")
    data = json.loads(results.read_text())
    data["results"]["tiny_arith"]["acc_stderr,none"] = "N/A"
    edited = tmp_path / results.name
    edited.write_text(json.dumps(data))
    acc = load_scorecard(_import(tmp_path, "na", edited)).summary.metrics["tiny_arith/acc"]
    assert acc.low is None and acc.high is None and not acc.gated


def test_not_a_results_file_or_samples_of_another_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, _ = _files("run1")
    for argv, expected in (
        ([str(LM / "tiny_arith.yaml")], "an lm-evaluation-harness results file"),
        ([str(results), str(LM / "tiny_arith.jsonl")], "an lm-evaluation-harness samples file"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["import", "lm-eval", *argv, "--out", str(tmp_path / "run")])
        err = capsys.readouterr().err.strip()
        assert exc.value.code == 1 and len(err.splitlines()) == 1 and expected in err, err
        assert not (tmp_path / "run").exists()


def test_a_document_scored_on_a_continuous_metric_passes_only_at_a_named_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """lm-eval's samples written with a graded metric in place of acc (as a bleu or f1 task writes them)."""
    results, (samples,) = _files("run1")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    for n, row in enumerate(rows):
        row["metrics"], row["f1"] = ["f1"], [0.25, 0.75][n % 2]
        del row["acc"]
    graded = tmp_path / samples.name
    graded.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(SystemExit) as exc:  # no 0/1 metric: no pass can be read without a line
        main(["import", "lm-eval", str(results), str(graded), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 1 and len(err.splitlines()) == 1 and "--pass-threshold" in err, err
    assert not (tmp_path / "run").exists()
    res = CliRunner().invoke(
        cli,
        [
            "import",
            "lm-eval",
            str(results),
            str(graded),
            "--pass-threshold",
            "0.5",
            "--out",
            str(tmp_path / "t"),
        ],
    )
    assert res.exit_code == 0, res.output
    statuses = [a.status.value for a in read_journal(tmp_path / "t" / "results.jsonl")]
    assert statuses == ["FAIL", "PASS"] * 4
    assert load_scorecard(tmp_path / "t").suite_version.endswith("pass at score >= 0.5")
