"""--junit and --summary of `assay eval`, `compare` and `gate` on real runs of a small benchmark: the JUnit
files read by junitparser with the right counts, the job summary against exact text at width 100, and a
case that measured nothing failing the CI verdict whatever --enforce says, with the re-run printed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from junitparser import Error, Failure, JUnitXml, Skipped

from assay.ci import job_summary
from assay.cli._main import cli
from assay.gate import load_verdict
from assay.runs.rundir import load_scorecard


def _eval(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    argv = ["eval", "cibench", "--results-dir", str(tmp_path / "runs"), "-j", "1", *args]
    before = set((tmp_path / "runs").glob("*"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["assay", *argv])  # what the runner records as the run's command line
        res = CliRunner().invoke(cli, argv, catch_exceptions=False)
    (run_dir,) = set((tmp_path / "runs").glob("*")) - before
    return res.exit_code, res.output, run_dir


def _outcomes(path: Path) -> dict[str, str]:
    xml = JUnitXml.fromfile(str(path))
    out = {}
    for suite in xml:
        for case in suite:
            kinds = {type(r) for r in case.result}
            out[case.name] = (
                "failure"
                if Failure in kinds
                else "error"
                if Error in kinds
                else "skipped"
                if Skipped in kinds
                else "passed"
            )
    return out


def test_eval_junit_counts_every_status(tmp_path: Path) -> None:
    code, output, _ = _eval(tmp_path, "--junit", str(tmp_path / "j.xml"))
    # the outage stopped the run (exit 3): `after` was never attempted
    assert code == 3
    xml = JUnitXml.fromfile(str(tmp_path / "j.xml"))
    suite = next(iter(xml))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (8, 2, 1, 2)
    assert _outcomes(tmp_path / "j.xml") == {
        "ok-1": "passed",
        "ok-2": "passed",
        "flip": "passed",
        "bad": "failure",
        "skip": "skipped",
        "broken": "failure",
        "outage": "error",
        "after": "skipped",
    }
    case = next(c for c in suite if c.name == "skip")
    assert "needs a GPU" in case.result[0].message
    assert "measured nothing" in output


def test_measured_nothing_fails_whatever_enforce_says(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    code, output, _ = _eval(tmp_path, "--no-outage", "--summary", str(summary))
    # `broken` errored before any model call: the eval alone would exit 0 (nothing gated)
    assert code == 2
    assert "measured nothing" in output and "broken" in output
    assert "re-run exactly those cases: assay eval cibench" in output
    assert "--scenario broken" in output
    code_plain, _, _ = _eval(tmp_path, "--no-outage")
    assert code_plain == 0  # no CI outputs asked for: the plain eval's exit code is unchanged


def test_rerun_is_the_dispatch_in_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_CI_TIER", "smoke")
    code, output, _ = _eval(tmp_path, "--summary", str(tmp_path / "s.md"))
    assert code == 3
    assert "gh workflow run assay-dispatch.yml -f tier=smoke -f scenarios=after,broken,outage" in output


EXPECTED_SUMMARY = """\
### assay eval cibench · pr · targeted run

**FAIL** (exit 2) · REGRESSION: 1 regressed: flip

Attempts: 10 (PASS 4 · FAIL 4 · SKIPPED 2)

#### Flipped cases

| case | baseline | current | why |
|---|---|---|---|
| flip | 2/2 stable-pass | 0/2 stable-fail | stable-pass -> stable-fail |

#### Cost

80 tokens in · 16 out · 8 model calls · cost $0.0080 (metered)
"""

#: the same summary at width 40: lines cut with an ellipsis; a table row keeps its case and both sides whole
EXPECTED_NARROW = """\
### assay eval cibench · pr · targeted …

**FAIL** (exit 2) · REGRESSION: 1 regre…

Attempts: 10 (PASS 4 · FAIL 4 · SKIPPED…

#### Flipped cases

| case | baseline | current | why |
|---|---|---|---|
| flip | 2/2 stable-pass | 0/2 stable-fail | stable-… |

#### Cost

80 tokens in · 16 out · 8 model calls ·…
"""


def test_compare_junit_and_summary_on_a_planted_drop(tmp_path: Path) -> None:
    ok = ["--no-outage", "--scenario", "ok-1,ok-2,flip,bad,skip", "-n", "2"]
    _, _, base = _eval(tmp_path, *ok)
    summary = tmp_path / "summary.md"
    code, _, weak = _eval(
        tmp_path,
        *ok,
        "--weak",
        "--compare",
        str(base),
        "--junit",
        str(tmp_path / "c.xml"),
        "--summary",
        str(summary),
    )
    assert code == 2
    # with a comparison only the regression fails; `bad` failed in the baseline too
    assert _outcomes(tmp_path / "c.xml") == {
        "ok-1": "passed",
        "ok-2": "passed",
        "flip": "failure",
        "bad": "passed",
        "skip": "skipped",
    }
    text = summary.read_text(encoding="utf-8")
    assert all(len(line) <= 100 for line in text.splitlines())
    assert text == EXPECTED_SUMMARY
    verdict = load_verdict(weak)  # what gate.hold decided, as verdict.json keeps it
    assert verdict.exit_code == 2 and verdict.comparison is not None
    narrow = job_summary(load_scorecard(weak), verdict, targeted=True, width=40)
    assert narrow == EXPECTED_NARROW
    # `assay compare` writes the same JUnit verdicts
    res = CliRunner().invoke(cli, ["compare", str(base), str(weak), "--junit", str(tmp_path / "cmp.xml")])
    assert res.exit_code == 2
    assert _outcomes(tmp_path / "cmp.xml") == _outcomes(tmp_path / "c.xml")


def test_gate_junit(tmp_path: Path) -> None:
    _, _, run = _eval(tmp_path, "--no-outage", "--scenario", "ok-1,bad", "-n", "2")
    exp = tmp_path / "exp.yaml"
    exp.write_text("benchmark: cibench\nsuite: pr\nlimits:\n  min_pass_rate: 0.9\n", encoding="utf-8")
    res = CliRunner().invoke(
        cli, ["gate", str(run), "--expect", str(exp), "--enforce", "--junit", str(tmp_path / "g.xml")]
    )
    assert res.exit_code == 2, res.output
    suite = next(iter(JUnitXml.fromfile(str(tmp_path / "g.xml"))))
    assert (suite.tests, suite.failures) == (1, 1)


def test_rerun_without_a_case_filter_says_it_reruns_the_suite(tmp_path: Path) -> None:
    from assay.ci._summary import rerun_command
    from assay.runs.rundir import load_meta

    _, _, run = _eval(tmp_path, "--no-outage", "--scenario", "ok-1,broken")
    meta = load_meta(run)
    assert rerun_command(meta, ["broken"], has_case_filter=True).endswith("--scenario broken")
    whole = rerun_command(meta, ["broken"], has_case_filter=False)
    assert "--scenario" not in whole and "has no case filter: this re-runs its whole suite" in whole
