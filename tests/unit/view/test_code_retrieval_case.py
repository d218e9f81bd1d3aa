"""The code-search case page on a real run (tests/fixtures/view/retrieval-code-pr-killed: the pr suite of
`assay eval retrieval --component code`, stopped after 18 of its 40 queries; its files are unedited): the
ranked files of each search against the files the fix changed."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from assay.view import Site
from assay.view._store import case_slug

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "view" / "retrieval-code-pr-killed"


def _site(tmp_path: Path) -> Site:
    shutil.copytree(FIXTURE, tmp_path / "runs" / "code")
    return Site(tmp_path / "runs")


def test_a_failed_query_shows_where_the_changed_file_ranked(tmp_path: Path) -> None:
    site = _site(tmp_path)
    html = site.case_page("code", case_slug("q:click-8.1.8-exception-color"))
    assert "src/click/exceptions.py" in html and "first gold rank 10" in html
    semantic = html.split("<h4>semantic top10</h4>")[1].split("</table>")[0]
    gold_rows = re.findall(r'<tr class="hit-gold"><td>(\d+)</td><td>([^<]+)</td>', semantic)
    assert gold_rows == [("10", "src/click/exceptions.py")]  # outside the top 5 the pass rule asks for
    assert "<h4>grep top10</h4>" in html


def test_a_passed_query_has_the_changed_file_first_and_the_run_is_listed_incomplete(tmp_path: Path) -> None:
    site = _site(tmp_path)
    html = site.case_page("code", case_slug("q:click-8.1.4-clear-slow"))
    semantic = html.split("<h4>semantic top10</h4>")[1]
    assert re.search(r'<tr class="hit-gold"><td>1</td><td>src/click/termui.py</td>', semantic)
    listing = site.index()
    assert "retrieval-code" in listing and ">incomplete<" in listing
    assert "NOT_RUN</span>&nbsp;22" in site.run_page("code")
