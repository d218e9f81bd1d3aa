"""pass^k in every scorecard of a run with two or more iterations: per case and overall (k up to the iteration
count, tau2-bench's estimator C(c, k) / C(n, k) averaged over cases), shown in the report and `assay view`.

Before: pass^k was computed only inside `compare`, never in a run's own scorecard, report or viewer.
"""

from __future__ import annotations

from math import comb
from pathlib import Path

import pytest

from assay.gate._simulate import scorecard_from_outcomes as card
from assay.report import render_markdown
from assay.report.markdown import pct
from assay.runs import Scorecard
from assay.stats import suite_pass_hat_k
from assay.view import Site
from assay.view._synthetic import write_synthetic_run

OUTCOMES = {"steady": "PPPP", "coin": "PFPF", "once": "FFPF", "never": "FFFF", "short": "PP--"}


def test_each_case_and_the_run_carry_pass_hat_k_up_to_the_iterations() -> None:
    sc = card(OUTCOMES)
    by = {c.case_id: c.pass_hat_k for c in sc.cases}
    assert by["steady"] == {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
    assert by["coin"] == {1: 0.5, 2: round(comb(2, 2) / comb(4, 2), 4), 3: 0.0, 4: 0.0}
    assert by["once"] == {1: 0.25, 2: 0.0, 3: 0.0, 4: 0.0}
    assert by["never"] == {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}
    assert by["short"] == {1: 1.0, 2: 1.0}  # two measured attempts: k up to 2 for this case
    # overall: the mean over the cases measured at least k times (the one rule, shared with compare)
    assert sc.summary.pass_hat_k == {k: round(suite_pass_hat_k(sc.cases, k), 4) for k in (1, 2, 3, 4)}
    assert sc.summary.pass_hat_k[2] == round((1 + 1 / 6 + 0 + 0 + 1) / 5, 4)
    assert sc.summary.pass_hat_k[4] == round((1 + 0 + 0 + 0) / 4, 4)
    # saved and read back with integer keys
    again = Scorecard.model_validate_json(sc.model_dump_json())
    assert again.summary.pass_hat_k == sc.summary.pass_hat_k and again.cases[1].pass_hat_k == by["coin"]


def test_one_iteration_has_no_pass_hat_k() -> None:
    sc = card({"a": "P", "b": "F"})
    assert sc.summary.pass_hat_k == {} and all(c.pass_hat_k == {} for c in sc.cases)
    md = render_markdown(sc)
    assert "pass^k" not in md


def test_the_report_shows_pass_hat_k_overall_and_per_case() -> None:
    md = render_markdown(card(OUTCOMES))
    assert "pass^k (all k attempts of a case pass; C(passed, k) / C(measured, k), mean over cases): " in md
    assert "k=1 55.0% · k=2 43.3% · k=3 25.0% · k=4 25.0%." in md
    assert "| case | category | stability | pass rate | pass^k | score | attempts |" in md
    assert "| coin | default | flaky | 50.0% | k=1 50.0% · k=2 16.7% · k=3 0.0% · k=4 0.0% |" in md


@pytest.fixture
def site(tmp_path: Path) -> Site:
    write_synthetic_run(tmp_path / "three", 30, iterations=3, seed=2)
    write_synthetic_run(tmp_path / "one", 10, iterations=1, seed=4)
    return Site(tmp_path)


def test_the_viewer_shows_pass_hat_k_on_the_run_and_case_pages(site: Site) -> None:
    run = site.run("three")
    sc = run.scorecard
    assert sc is not None and set(sc.summary.pass_hat_k) == {1, 2, 3}
    page = site.run_page("three")
    assert f"pass^k k=1 {pct(sc.summary.pass_hat_k[1])}" in page
    assert "<th>pass^k</th>" in page
    case = sc.cases[0]
    text = " · ".join(f"k={k} {pct(v)}" for k, v in sorted(case.pass_hat_k.items()))
    assert text in page and f"pass^k {text}" in site.case_page("three", case.case_id)
    assert "pass^k" not in site.run_page("one")  # one iteration: nothing to show
