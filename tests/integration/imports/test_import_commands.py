"""Every command that reads run directories works on imported ones unchanged: health, eval noise --from,
compare/gate with --junit and --summary, trend, scorecard and view (promptfoo's three runs and a tau2 run)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli

FOREIGN = Path(__file__).parents[2] / "fixtures" / "foreign"


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _ok(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for n in (1, 2, 3):
        out[f"pf{n}"] = tmp_path / "runs" / f"pf{n}"
        _ok("import", "promptfoo", str(FOREIGN / "promptfoo" / f"run{n}.json"), "--out", str(out[f"pf{n}"]))
    out["tau"] = tmp_path / "runs" / "tau"
    _ok("import", "tau2", str(FOREIGN / "tau2" / "airline.json"), "--out", str(out["tau"]))
    return out


def test_health_and_noise_fold_imported_runs(runs: dict[str, Path], tmp_path: Path) -> None:
    pf = [str(runs[f"pf{n}"]) for n in (1, 2, 3)]
    _ok("health", *pf, "--out", str(tmp_path / "h"))
    health = json.loads((tmp_path / "h" / "health.json").read_text())
    assert health["counts"]["saturated"] == 6 and health["counts"]["always-fail"] == 2
    _ok("eval", "noise", "--from", *pf, "--out", str(tmp_path / "noise.json"))
    noise = json.loads((tmp_path / "noise.json").read_text())
    assert len(noise["run_ids"]) == 3 and len(noise["cases"]) == 8
    # the noise floor of imported runs holds a comparison of them
    _ok("compare", pf[0], pf[2], "--noise", str(tmp_path / "noise.json"))


def test_compare_and_gate_write_junit_and_a_summary_that_names_the_import(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    junit, summary = tmp_path / "c.xml", tmp_path / "c.md"
    _ok("compare", str(runs["pf1"]), str(runs["pf2"]), "--junit", str(junit), "--summary", str(summary))
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == 8 and not ET.parse(junit).getroot().findall(".//failure")
    text = summary.read_text()
    assert text.startswith("### assay import promptfoo · ") and "**PASS** (exit 0)" in text
    assert "assay eval" not in text  # no eval ran it
    exp = tmp_path / "exp.yaml"
    _ok("propose", str(runs["pf1"]), str(runs["pf2"]), "--out", str(exp))
    gate_junit = tmp_path / "g.xml"
    _ok("gate", str(runs["pf3"]), "--expect", str(exp), "--enforce", "--junit", str(gate_junit))
    assert ET.parse(gate_junit).getroot().findall(".//testcase")
    # a tau2 run: its INFRA_ERROR trial is not the subject's; every case was measured, so none errors in JUnit
    tau_junit = tmp_path / "t.xml"
    copy = tmp_path / "tau-again"
    _ok("import", "tau2", str(FOREIGN / "tau2" / "airline.json"), "--out", str(copy))
    _ok("compare", str(runs["tau"]), str(copy), "--junit", str(tau_junit))
    assert len(ET.parse(tau_junit).getroot().findall(".//testcase")) == 4
    # an instance SWE-bench never got is skipped with what the import knows, not "the run stopped"
    swe, swe_junit = tmp_path / "swe", tmp_path / "s.xml"
    _ok("import", "swebench", str(FOREIGN / "swebench" / "acme__agent-1.demo.json"), "--out", str(swe))
    _ok("compare", str(swe), str(swe), "--junit", str(swe_junit))
    (skipped,) = ET.parse(swe_junit).getroot().findall(".//skipped")
    assert skipped.get("message") == "NOT_RUN: the swebench result holds no outcome for it"


def test_trend_and_release_scorecard_read_imported_runs(runs: dict[str, Path], tmp_path: Path) -> None:
    pf = [str(runs[f"pf{n}"]) for n in (1, 2, 3)]
    out = _ok("trend", *pf, "--target", "0.9", "--out", str(tmp_path / "tr"))
    trend = json.loads((tmp_path / "tr" / "trend.json").read_text())
    assert len(trend["points"]) == 3 and len(trend["suggestions"]) == 6
    # an imported item lives in the other tool's task: assay's tiers file does not hold it
    assert "promptfoo's task" in out and "ci_tiers.json" not in out
    weights = tmp_path / "w.yaml"
    weights.write_text("import-promptfoo: 1\nimport-tau2: 2\n")
    _ok("scorecard", pf[0], str(runs["tau"]), "--weights", str(weights), "--out", str(tmp_path / "sc"))
    rows = json.loads((tmp_path / "sc" / "release_scorecard.json").read_text())["rows"]
    assert {r["benchmark"]: r["model"] for r in rows} == {
        "import-promptfoo": "exec: python3 provider.py",
        "import-tau2": "gpt-4.1-mini",
    }


def test_runs_show_an_incomplete_import_says_it_cannot_be_resumed(runs: dict[str, Path]) -> None:
    out = _ok("runs", "show", str(runs["tau"]))  # its infrastructure_error trial left it incomplete
    assert "pass rate 54.5% of 11 measured" in out
    assert "an import cannot be resumed: finish it in tau2, import again" in out and "--resume" not in out


def test_view_pages_each_imported_run_and_case(runs: dict[str, Path], tmp_path: Path) -> None:
    site = tmp_path / "site"
    _ok("view", "--dir", str(tmp_path / "runs"), "--bundle", str(site))
    assert len(list((site / "runs" / "pf1" / "case").glob("*.html"))) == 8
    page = (site / "runs" / "tau" / "case" / "3.html").read_text()
    assert "INFRA_ERROR" in page and "reward.NL_ASSERTION" in page and "pass^k" in page
    assert "Traceback" not in page
    assert (site / "trends" / "import-tau2" / "tau2-airline.html").is_file()
