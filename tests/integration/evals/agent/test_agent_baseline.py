"""`assay eval agent --suite pr` compares clean against the committed baseline, and the gate catches a real break.

The baseline was saved by the documented command and never edited:

    rm -rf tests/fixtures/baselines/agent-pr
    assay eval agent --suite pr --iterations 3 --results-dir /tmp/agent-baseline \\
        --save-baseline tests/fixtures/baselines/agent-pr

A scenario edit changes the suite version: the comparison then says "not comparable"; regenerate it as above.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.evals.agent import AgentBenchmark, checks
from assay.exec import RunOptions, run_benchmark
from assay.gate import compare

BASELINE = Path(__file__).resolve().parents[3] / "fixtures" / "baselines" / "agent-pr"
REGENERATE = "regenerate it with the command in this file's docstring"


def test_pr_compares_clean_and_a_broken_number_check_regresses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    ok = run_benchmark(AgentBenchmark, {}, RunOptions(out=tmp_path / "ok", command_line=["t"]))
    same = compare(BASELINE, ok.run_dir, require_complete=True)
    assert same.comparable, f"{same.not_comparable}: {REGENERATE}"
    assert same.exit_code == 0 and same.regressions == [], same.verdict
    # a number parser that reads nothing: every scenario graded on a number now fails in code
    monkeypatch.setattr(checks, "find_quantities", lambda text: [])
    broken = run_benchmark(
        AgentBenchmark, {}, RunOptions(out=tmp_path / "bad", iterations=3, command_line=["t"])
    )
    verdict = compare(BASELINE, broken.run_dir)
    assert verdict.exit_code == 2, verdict.verdict
    for case in (
        "dqa-price-table-annual",
        "dqa-quarterly-revenue",
        "cost-percentage",
        "metric:code_checks_passed",
    ):
        assert case in verdict.regressions, verdict.regressions
    # scenarios graded without a number, or that failed already, are not regressions
    assert "refuse-phishing-email" not in verdict.regressions
    assert "dqa-runbook-sev1-escalation" not in verdict.regressions
