"""The viewer in Debian's chromium: the runs list and its filters, a run, a case page of each benchmark,
and trends; a screenshot of each page is saved."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("view_runs")


def test_runs_list_shows_every_run_and_filters_by_benchmark(served, page, shot) -> None:
    page.goto(served.url + "/")
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 6
    keys = page.locator("table.runs tbody tr td:first-child a").all_inner_texts()
    assert set(keys) == {"agent-good", "agent-broken", "rag", "memory", "serving", "serving-slow"}
    assert keys.index("agent-broken") < keys.index("agent-good")  # newest first
    shot(page, "runs")
    page.select_option('select[data-filter="benchmark"]', "agent")
    assert page.locator("table.runs tbody tr:visible").count() == 2
    page.select_option('select[data-filter="benchmark"]', "")
    page.select_option('select[data-filter="state"]', "complete")
    assert page.locator("table.runs tbody tr:visible").count() == 6


def test_a_run_shows_scorecard_metrics_and_case_table(served, page, shot) -> None:
    page.goto(served.url + "/")
    page.click("table.runs a:text-is('rag')")
    assert page.url.endswith("/runs/rag/index.html")
    assert "pass rate" in page.inner_text("p.summary")
    assert page.locator("table.metrics").get_by_role("cell", name="sdk_recall@5", exact=True).count() == 1
    assert page.locator("svg.plot circle.point").count() >= 5  # the recall@k curve, one point per k
    cases = page.locator("table.cases tbody tr")
    n = cases.count()
    assert n > 50
    shot(page, "run-rag")
    page.select_option('select[data-filter="status"]', "FAIL")  # served: the server filters every case
    page.wait_for_url("**/runs/rag/index.html?status=FAIL")
    failing = page.locator("table.cases tbody tr")
    assert 0 < failing.count() < n
    assert all("FAIL" in t for t in failing.all_inner_texts())
    assert f"of {n})" in page.inner_text("h2:has-text('Cases')")


def test_agent_case_page_shows_conversation_tools_judge_and_checks(served, page, shot) -> None:
    page.goto(served.url + "/runs/agent-good/index.html")
    page.click("text=dqa-refund-window-member")
    assert page.locator(".attempts .attempt").count() == 2  # both iterations, side by side
    conv = page.locator("section.conversation").first
    assert conv.locator(".msg.user").count() >= 1 and conv.locator(".msg.assistant").count() >= 1
    tool = conv.locator(".tool").first
    assert "query_documents" in tool.inner_text() and "arguments" in tool.inner_text()
    assert (
        page.locator("section.checks").first.locator("tbody tr").filter(has_text="expected_tool").count() >= 1
    )
    judge = page.locator("section.judge").first
    assert "verdict PASS" in judge.inner_text()
    assert judge.locator("table.dimensions th").count() > 4  # turn, score, verdict, the dimensions, reasons
    shot(page, "case-agent")


def test_retrieval_case_page_ranks_hits_against_the_evidence(served, page, shot) -> None:
    page.goto(served.url + "/runs/rag/index.html")
    page.locator("table.cases a").first.click()
    assert "Labelled evidence" in page.inner_text("main")
    hits = page.locator("table.hits tbody tr")
    assert hits.count() == 5
    assert page.locator("tr.hit-gold").count() >= 1  # the pr suite's first question is found in the top 5
    shot(page, "case-retrieval")


def test_memory_case_page_shows_what_the_agent_was_shown(served, page, shot) -> None:
    page.goto(served.url + "/runs/memory/index.html")
    page.locator("table.cases a", has_text="leo-snacks").click()
    assert "Shown to the agent" in page.inner_text("main")
    assert "peanut" in page.inner_text("main pre")
    shot(page, "case-memory")


def test_serving_case_page_plots_latency_distributions(served, page, shot) -> None:
    page.goto(served.url + "/runs/serving/index.html")
    by_level = page.locator("h2:has-text('Latency by level') ~ svg.plot")
    assert by_level.count() == 2 and by_level.first.locator("polyline.cdf").count() == 2  # c1 and c2
    page.locator("table.cases a", has_text="c2").click()
    assert "6 measured requests" in page.inner_text("main")
    assert page.locator("svg.plot polyline.cdf").count() == 4  # TTFT, E2E, TPOT, ITL
    shot(page, "case-serving")


def test_trends_plot_each_metric_across_runs_with_the_backlog_target(served, page, shot) -> None:
    page.goto(served.url + "/trends.html")
    page.click("text=agent · pr")
    assert page.locator("h2", has_text="pass rate").first.is_visible()
    first = page.locator("svg.plot").first
    assert first.locator("circle.point").count() == 2  # two agent runs
    assert first.locator("line.interval").count() == 2
    backlog = page.locator("h2", has_text="backlog pass rate")
    assert backlog.count() == 1
    assert page.locator("svg.plot line.target").count() == 1 and "target 0.5" in page.inner_text("main")
    chart = page.locator("svg.plot").nth(1)
    tips = chart.locator("circle.point title").evaluate_all("els => els.map(e => e.textContent)")
    assert [t.split(": ")[-1] for t in tips] == ["0.5", "0"]  # good run: one of two backlog scenarios passes
    shot(page, "trends-agent")
