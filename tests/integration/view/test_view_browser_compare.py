"""Compare in the browser: flipped cases first, a click from a flipped case to its transcript, the verdict
and exit code of `assay compare`; and the --bundle static site, opened from file://."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from assay.view import Site, write_bundle


def _cli_compare(run_cli, base: Path, cur: Path, tmp: Path) -> dict:
    """`assay compare --json` on copies (it writes comparison.json beside the current run)."""
    b, c = shutil.copytree(base, tmp / "b"), shutil.copytree(cur, tmp / "c")
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run_cli("compare", str(b), str(c), "--json")
    data = json.loads(out.getvalue())
    assert data["exit_code"] == code
    return data


def test_flipped_case_click_through_to_its_transcript(
    served, view_runs, page, shot, tmp_path, run_cli
) -> None:
    page.goto(served.url + "/compare.html")
    page.select_option('select[name="base"]', "agent-good")
    page.select_option('select[name="cur"]', "agent-broken")
    page.click("#compare-form button")
    page.wait_for_url("**/compare/agent-good/agent-broken.html")
    cli = _cli_compare(run_cli, view_runs / "agent-good", view_runs / "agent-broken", tmp_path)
    verdict = page.locator("p.verdict")
    assert verdict.get_attribute("data-exit-code") == str(cli["exit_code"])
    assert cli["verdict"] in verdict.inner_text()
    flipped = page.locator("table.flipped tbody tr")
    cli_flipped = sorted(c["case_id"] for c in cli["cases"] if c["bucket"] == "regressed")
    assert len(cli_flipped) == 3 and cli["exit_code"] == 2 and "REGRESSION" in verdict.inner_text()
    assert sorted(flipped.locator("td:first-child").all_inner_texts()) == cli_flipped
    shot(page, "compare-agent")
    row = flipped.filter(has_text="dqa-refund-window-member")
    assert "regressed" in row.inner_text() and "-1.00" in row.inner_text()
    row.locator("a.to-case").click()
    page.wait_for_url("**/runs/agent-broken/case/dqa-refund-window-member.html")
    conv = page.locator("section.conversation").first
    assert conv.locator(".msg.user").count() >= 1
    # the broken profile offers no query_documents: the transcript shows the call failing
    assert "unknown tool 'query_documents'" in conv.inner_text()
    assert "✘ failed" in page.locator("section.checks").first.inner_text()
    shot(page, "compare-click-through-case")


def test_a_run_made_with_compare_links_to_its_baseline(served, page) -> None:
    page.goto(served.url + "/runs/agent-broken/index.html")
    page.click("text=compare with its baseline agent-good")
    page.wait_for_url("**/compare/agent-good/agent-broken.html")
    assert page.locator("p.verdict").get_attribute("data-exit-code") == "2"
    page.goto(served.url + "/runs/agent-good/index.html")
    assert page.locator("text=compare with its baseline").count() == 0  # made without --compare


def test_serving_compare_shows_where_latency_went(served, page, shot, view_runs, tmp_path, run_cli) -> None:
    page.goto(served.url + "/compare/serving/serving-slow.html")
    cli = _cli_compare(run_cli, view_runs / "serving", view_runs / "serving-slow", tmp_path)
    assert page.locator("p.verdict").get_attribute("data-exit-code") == str(cli["exit_code"])
    ttft = page.locator("table.metrics tr", has=page.get_by_role("cell", name="ttft_median_ms", exact=True))
    assert "regressed" in ttft.inner_text()  # a ten times slower first token is past any tolerance
    figures = page.locator("h2:has-text('Where latency went') ~ figure")
    assert figures.count() == 4  # c1 and c2: TTFT and E2E
    lines = figures.first.locator("polyline.cdf")
    assert lines.count() == 2
    # the current run's TTFT CDF lies right of the baseline's: its median x is larger
    xs = lines.evaluate_all(
        "ls => ls.map(l => { const p = l.getAttribute('points').split(' '); return parseFloat(p[Math.floor(p.length / 2)]); })"
    )
    assert xs[1] > xs[0]
    shot(page, "compare-serving")


def test_bundle_works_from_file_urls(view_runs, page, shot, tmp_path) -> None:
    out = tmp_path / "site"
    n = write_bundle(Site(view_runs, backlog_target=0.5), out)
    assert n > 100 and (out / "index.html").is_file()
    page.goto((out / "index.html").as_uri())
    assert page.locator("table.runs tbody tr").count() == 6
    page.select_option('select[data-filter="benchmark"]', "memory")  # the script runs from file:// too
    assert page.locator("table.runs tbody tr:visible").count() == 1
    shot(page, "bundle-runs")
    page.click("header >> text=compare")
    page.click("text=agent-good → agent-broken")
    assert page.url.startswith("file://") and page.url.endswith("/compare/agent-good/agent-broken.html")
    assert page.locator("table.flipped tbody tr").count() == 3
    page.locator("table.flipped a.to-case").first.click()
    assert page.locator("section.conversation .msg").count() >= 2
    shot(page, "bundle-case")
    page.goto((out / "runs" / "serving" / "index.html").as_uri())
    page.click("text=report.html")
    assert page.url.endswith("/runs/serving/files/report.html")
    page.goto((out / "trends.html").as_uri())
    page.click("text=retrieval-rag · pr")
    assert page.locator("svg.plot").count() > 10
    shot(page, "bundle-trends")
