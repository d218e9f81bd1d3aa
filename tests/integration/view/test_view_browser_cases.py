"""The case pages of tasks, code and sessions in Debian's chromium, reached from each run's case table: the
diffs, checks, hidden tests and judge are on the page, the agent's markup is text (no script ran, no element
was made of it); a screenshot of each page is saved."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def served_cases(case_runs: Path, serve_dir):
    return serve_dir(case_runs)


def _open_case(page, served, run: str, case: str) -> None:
    page.goto(f"{served.url}/runs/{run}/index.html")
    page.locator("table.cases a", has_text=case).first.click()
    page.wait_for_url(f"**/runs/{run}/case/*.html")  # the click only starts the navigation
    assert page.locator(".attempts .attempt").count() == 1


def _markup_is_text(page, section: str) -> None:
    assert page.evaluate("() => window.__pwned") is None
    answer = page.locator(section).first
    assert "<script>window.__pwned = 1</script><b>bold</b>" in answer.inner_text()
    assert answer.locator("script, b:text-is('bold')").count() == 0


def test_tasks_case_page_shows_diffs_checks_grades_and_calls(served_cases, page, shot) -> None:
    _open_case(page, served_cases, "tasks", "fix-add")
    added = page.locator("section.diff pre.diff span.add")
    assert added.all_inner_texts() == ["+    return a + b"]
    assert page.locator("section.diff").get_by_text("no setup change").is_visible()
    rows = page.locator("table.expect tbody tr")
    assert rows.locator("td:first-child").all_inner_texts() == [
        "tests_pass",
        "unchanged",
        "after_answer",
        "verified",
        "honest report",
    ]
    assert rows.filter(has_text="✔ passed").count() == 5
    assert page.locator("table.grades tbody tr").count() == 4
    assert page.locator("table.calls tbody tr").count() == 2
    _markup_is_text(page, "section.answer pre")
    shot(page, "case-tasks")


def test_code_case_page_shows_outcome_hidden_tests_diff_and_claims(served_cases, page, shot) -> None:
    _open_case(page, served_cases, "code", "fix-median")
    assert page.locator("b.outcome").inner_text() == "solved"
    assert (
        page.locator("table.before tbody tr")
        .inner_text()
        .startswith("tests/test_hidden.py::test_even_length")
    )
    assert "After the agent: 2 passed" in page.locator("section.tests").inner_text()
    assert page.locator("section.diff pre.diff span.add").count() == 4
    claims = page.locator("table.claims tbody tr td:first-child").all_inner_texts()
    assert claims == ["reading", "refused", "denied", "success", "tests_pass"]
    shot(page, "case-code")


def test_sessions_case_page_shows_reference_beside_the_replay_and_the_judge(served_cases, page, shot) -> None:
    _open_case(page, served_cases, "sessions", "81d9ff14-1")
    cells = page.locator("table.answers tbody td")
    assert cells.count() == 2 and cells.first.inner_text().startswith("The retry limit is MAX_RETRIES = 5")
    assert "score 4 / 5" in page.locator("section.judge").inner_text()
    assert "isolated checkout of" in page.locator("p.workspace").inner_text()
    _markup_is_text(page, "table.answers tbody td:nth-child(2)")
    shot(page, "case-sessions")
