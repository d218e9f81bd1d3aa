"""One verdict path: gate.hold decides every exit code and its reason (regression 2, not comparable 3,
--require-complete 2, a missed expectation under --enforce 2, a stop, ok 0) with one rule; the stand-alone
`assay compare`/`assay gate` reach the same code from the same inputs; the reports render the verdict in one
write; the CI outputs are built from it with nothing read back from disk."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay._util import Scrubber
from assay.ci.outputs import eval_outputs
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.gate import Finding, GateOptions, Verdict, decide, hold, load_verdict
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.gate._simulate import simulated_meta
from assay.report import write_reports
from assay.runs.records import Attempt, RunMeta, Scorecard, Status, Usage


def _saved(root: Path, name: str, sc: Scorecard) -> Path:
    d = root / name
    d.mkdir()
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    return d


def _expectations(root: Path, min_passed: float) -> Path:
    exp = root / "exp.yaml"
    exp.write_text(yaml.safe_dump({"benchmark": "sim", "suite": "pr", "model": "sim-model",
                                   "judge_model": "sim-judge", "limits": {"min_passed": min_passed}}))  # fmt: skip
    return exp


@pytest.mark.parametrize(
    ("case", "code", "reason"),
    [
        ("ok", 0, "no regression"),
        ("nothing asked", 0, "ok: nothing compared or gated"),
        ("regression", 2, "REGRESSION: 1 regressed: a"),
        ("not comparable", 3, "not comparable: suite version differs: baseline '1', current '2'"),
        ("incomplete", 2, "incomplete: not measured: b (--require-complete)"),
        ("incomplete against the baseline", 2, "INCOMPLETE: 1 baseline item(s) missing or unmeasured"),
        ("missed, enforced", 2, "gate missed: 1 limit(s) missed"),
        ("missed, not enforced", 0, "gate missed: 1 limit(s) missed"),
        ("stopped", 3, "run stopped: backend outage: connection refused"),
    ],
)
def test_each_exit_code_and_its_reason_come_from_hold(
    tmp_path: Path, case: str, code: int, reason: str
) -> None:
    base = _saved(tmp_path, "base", card({"a": "PPP", "b": "PPP"}, run_id="base"))
    sc, opts, kw = card({"a": "PPP", "b": "PPP"}, run_id="cur"), GateOptions(compare=base), {}
    if case == "nothing asked":
        opts = GateOptions()
    elif case == "regression":
        sc = card({"a": "FFF", "b": "PPP"}, run_id="cur")
    elif case == "not comparable":
        sc = card({"a": "FFF", "b": "PPP"}, run_id="cur", suite_version="2")
    elif case == "incomplete":
        sc, opts = card({"a": "PPP", "b": "I-I"}, run_id="cur"), GateOptions(require_complete=True)
    elif case == "incomplete against the baseline":
        sc = card({"a": "PPP", "b": "III"}, run_id="cur")
        opts = GateOptions(compare=base, require_complete=True)
    elif case.startswith("missed"):
        opts = GateOptions(expect=_expectations(tmp_path, 3), enforce=case == "missed, enforced")
    elif case == "stopped":
        kw = {"stopped": "backend outage: connection refused", "stopped_code": 3}
    run_dir = _saved(tmp_path, "cur", sc)
    verdict = hold(sc, opts, run_dir=run_dir, **kw)
    assert (verdict.exit_code, verdict.reason.startswith(reason)) == (code, True), verdict.reason
    assert load_verdict(run_dir) == verdict  # saved as verdict.json, versioned
    assert verdict.schema_version == 1
    if case == "stopped":  # a stopped run is neither compared nor gated, whatever was asked
        assert verdict.comparison is None and not (run_dir / "comparison.json").exists()


def test_the_worst_finding_wins_and_every_failing_one_is_named() -> None:
    final = decide(
        [Finding(0, "no regression"), Finding(2, "gate missed: x"), Finding(3, "not comparable: y")]
    )
    assert final == Finding(3, "not comparable: y; gate missed: x")
    assert decide([Finding(0, "no regression"), Finding(0, "gate met: all 1 limit(s) met")]).code == 0
    assert decide([]).reason == "ok: nothing compared or gated"


def test_a_regression_and_a_missed_gate_together_and_no_baseline_saved(tmp_path: Path) -> None:
    base = _saved(tmp_path, "base", card({"a": "PPP", "b": "PPP"}, run_id="base"))
    sc = card({"a": "FFF", "b": "PPP"}, run_id="cur")
    opts = GateOptions(
        compare=base, expect=_expectations(tmp_path, 2), enforce=True, save_baseline=tmp_path / "bl"
    )
    verdict = hold(sc, opts, run_dir=_saved(tmp_path, "cur", sc))
    assert verdict.exit_code == 2
    assert verdict.reason == "REGRESSION: 1 regressed: a; gate missed: 1 limit(s) missed"
    assert verdict.baseline_saved is None and "not saved: this run regressed" in (
        verdict.baseline_not_saved or ""
    )
    assert not (tmp_path / "bl").exists()


def test_an_incomplete_run_is_not_saved_as_the_baseline_exit_1(tmp_path: Path) -> None:
    sc = card({"a": "PPP", "b": "PP-"}, run_id="cur")
    verdict = hold(sc, GateOptions(save_baseline=tmp_path / "bl"), run_dir=_saved(tmp_path, "cur", sc))
    assert verdict.exit_code == 1 and "the run is incomplete" in verdict.reason
    assert not (tmp_path / "bl" / "scorecard.json").exists()


def _unspent_attempts() -> list[Attempt]:
    now = datetime.now(UTC)
    return [
        Attempt(case_id="a", iteration=0, status=Status.PASS, started_at=now, usage=Usage(calls=1)),
        Attempt(case_id="b", iteration=0, status=Status.ERROR, started_at=now),
    ]


def test_a_case_that_measured_nothing_fails_only_under_ci_outputs() -> None:
    sc = card({"a": "P", "b": "E"}, run_id="cur")
    assert hold(sc, GateOptions(), attempts=_unspent_attempts()).exit_code == 0
    verdict = hold(sc, GateOptions(fail_unspent=True), attempts=_unspent_attempts())
    assert (verdict.exit_code, verdict.unspent) == (2, ["b"])
    assert verdict.reason == "1 case(s) measured nothing: b"


def test_standalone_compare_and_gate_exit_as_the_eval_would(tmp_path: Path) -> None:
    from assay.cli._gate import compare_command, gate_command

    base = _saved(tmp_path, "base", card({"a": "PPP", "b": "PPP"}, run_id="base"))
    for outcomes, version in (
        ({"a": "FFF", "b": "PPP"}, "1"),
        ({"a": "PPP", "b": "PPP"}, "2"),
        ({"a": "PPP"}, "1"),
    ):
        sc = card(outcomes, run_id="cur", suite_version=version)
        cur = tmp_path / f"cur-{len(list(tmp_path.iterdir()))}"
        cur.mkdir()
        (cur / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
        held = hold(sc, GateOptions(compare=base, require_complete=True)).exit_code
        res = CliRunner().invoke(compare_command, [str(base), str(cur), "--require-complete"])
        assert res.exit_code == held, res.output
        exp = _expectations(tmp_path, 2)
        held = hold(sc, GateOptions(expect=exp, enforce=True)).exit_code
        assert (
            CliRunner().invoke(gate_command, [str(cur), "--expect", str(exp), "--enforce"]).exit_code == held
        )
    assert {held, res.exit_code} == {2}


class _Two(Benchmark):
    name = "sim"

    def load_suite(self, suite: str) -> Suite:
        return Suite(suite, "1", [Case("a"), Case("b")])

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        return Outcome(Status.PASS)


def test_report_md_and_html_hold_the_comparison_after_one_write(tmp_path: Path) -> None:
    base = _saved(tmp_path, "base", card({"a": "PPP", "b": "PPP"}, run_id="base"))
    sc = card({"a": "FFF", "b": "PPP"}, run_id="cur")
    run_dir = _saved(tmp_path, "cur", sc)
    verdict = hold(sc, GateOptions(compare=base), run_dir=run_dir)
    write_reports(run_dir, sc, _Two({}), Scrubber(), verdict=verdict, attempts=[])
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert md.count("## Compared with baseline") == 1 and md.index("## Cost") < md.index("## Compared with")
    assert "**Verdict: REGRESSION: 1 regressed: a** (exit 2)" in md
    assert html.count("<h2>Compared with baseline</h2>") == 1
    assert "<strong>Verdict: REGRESSION: 1 regressed: a</strong> (exit 2)" in html
    write_reports(run_dir, sc, _Two({}), Scrubber(), attempts=[])  # without a verdict: no section
    assert "Compared with baseline" not in (run_dir / "report.html").read_text(encoding="utf-8")


def test_ci_outputs_from_the_verdict_with_nothing_on_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    base = _saved(tmp_path, "base", card({"a": "PPP", "b": "PPP"}, run_id="base"))
    sc = card({"a": "FFF", "b": "EEE"}, run_id="cur")
    meta: RunMeta = simulated_meta(["a", "b"], 3, run_id="cur")
    meta.command_line = ["assay", "eval", "sim", "--junit", "j.xml"]
    verdict: Verdict = hold(
        sc, GateOptions(compare=base, fail_unspent=True), meta=meta, attempts=_unspent_attempts()
    )
    out = tmp_path / "ci"  # no run directory: no journal, meta.json or comparison.json to read back
    eval_outputs(sc, verdict, meta, has_case_filter=True, junit=out / "j.xml", summary=out / "s.md")
    assert sorted(p.name for p in out.iterdir()) == ["j.xml", "s.md"]
    summary = (out / "s.md").read_text(encoding="utf-8")
    assert "**FAIL** (exit 2) · 1 case(s) measured nothing" in summary
    assert "assay eval sim --scenario b" in summary
    assert 'name="a"' in (out / "j.xml").read_text(encoding="utf-8")
    assert "re-run exactly those cases: assay eval sim --scenario b" in capsys.readouterr().err


def test_ci_outputs_fail_a_run_that_measured_nothing_but_the_baseline_is_gated_as_before(
    tmp_path: Path,
) -> None:
    """The baseline is gated on comparison, expectations and completeness; CI's unspent cases raise the exit
    code after it (as when the CI verdict came after the eval's own)."""
    sc = card({"a": "PP", "b": "EE"}, run_id="cur")
    opts = GateOptions(save_baseline=tmp_path / "bl", fail_unspent=True)
    verdict = hold(sc, opts, run_dir=_saved(tmp_path, "cur", sc), attempts=_unspent_attempts())
    assert (verdict.exit_code, verdict.unspent) == (2, ["b"])
    assert verdict.baseline_saved == str(tmp_path / "bl") and (tmp_path / "bl" / "scorecard.json").is_file()
