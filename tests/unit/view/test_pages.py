"""Pages rendered from synthetic runs: the case table is paged, lookups never become paths, plots draw."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.view import NotFound, Site
from assay.view._pages import PAGE_SIZE
from assay.view._safety import run_file
from assay.view._svg import Point, cdf_chart, line_chart
from assay.view._synthetic import write_synthetic_run


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("runs")
    write_synthetic_run(root / "big", 2 * PAGE_SIZE + 50, seed=3)
    write_synthetic_run(root / "older", 10, seed=0)
    write_synthetic_run(root / "live", 10, finish=False, seed=1)
    return Site(root, backlog_target=0.5)


def _rows(html: str) -> int:
    return len(re.findall(r'<tr data-status="', html))


def test_case_table_is_paged(site: Site) -> None:
    first = site.run_page("big")
    assert _rows(first) == PAGE_SIZE and 'href="page-3.html"' in first
    assert _rows(site.run_page("big", 3)) == 50
    assert _rows(site.run_page("big", 99)) == 50  # past the end: the last page


def test_filters_apply_to_every_case_before_paging(site: Site) -> None:
    html = site.run_page("big", 1, {"status": "FAIL", "bogus": "x"}, served=True)
    card = site.run("big").scorecard
    assert card is not None
    failing = sum(1 for c in card.cases if c.counts.get("FAIL"))
    assert 0 < failing < PAGE_SIZE < len(card.cases)
    assert _rows(html) == failing and f"Cases ({failing} of {len(card.cases)})" in html
    assert html.count('data-status="FAIL"') == failing and 'data-query="1"' in html
    assert "<option selected>FAIL</option>" in html
    assert 'data-query="1"' not in site.run_page("big")  # a bundle filters rows in the page


def test_a_run_in_progress_and_its_case_pages(site: Site) -> None:
    html = site.run_page("live")
    assert "in progress" in html and "5/10 attempts" in html
    assert "case-00001" in site.case_page("live", "case-00001")
    recorded = site.case_page("big", "case-00001")
    assert "iteration 0" in recorded and "no attempt recorded" not in recorded
    # a case of the suite with no record yet: listed in meta.json, not in the journal
    with pytest.raises(NotFound):
        site.case_page("live", "case-00009")


@pytest.mark.parametrize("key", ["..", "../big", "big/..", "", ".", "big~..", "/etc"])
def test_run_keys_are_looked_up_never_joined(site: Site, key: str) -> None:
    with pytest.raises(NotFound):
        site.run_page(key)


def test_unknown_case_and_unfinished_compare_are_not_found(site: Site) -> None:
    with pytest.raises(NotFound):
        site.case_page("big", "../../meta")
    with pytest.raises(NotFound):
        site.compare_page("big", "live")  # no scorecard yet: nothing to compare


@pytest.mark.parametrize(
    "name", ["..", "../big/meta.json", "a/b", ".report.md", "meta.json", "results.jsonl", "x\0.png"]
)
def test_run_files_outside_the_allowlist_are_refused(site: Site, name: str) -> None:
    assert run_file(site.root, site.root / "big", name) is None


def test_compare_of_two_synthetic_runs_uses_the_gate(site: Site) -> None:
    html = site.compare_page("older", "big")
    assert 'data-exit-code="0"' in html or 'data-exit-code="2"' in html
    assert "only_in_current" in html  # big has cases older lacks


def test_plots_draw_points_intervals_targets_and_cdfs() -> None:
    svg = line_chart(
        [Point("a", 0.5, 0.4, 0.6), Point("b", None), Point("c", 0.7)], "t", target=0.9, zero_one=True
    )
    assert svg.count('class="point"') == 2 and svg.count('class="interval"') == 1 and 'class="target"' in svg
    assert "nothing measured" in line_chart([Point("a", None)], "t")
    cdf = cdf_chart({"x": [3.0, 1.0, 2.0], "empty": []}, "t", "ms")
    assert cdf.count('class="cdf"') == 1
    pts = re.search(r'class="cdf" points="([^"]+)"', cdf).group(1).split()  # type: ignore[union-attr]
    ys = [float(p.split(",")[1]) for p in pts]
    assert ys == sorted(ys, reverse=True)  # the CDF rises (SVG y grows downward)


def test_trends_index_and_page(site: Site) -> None:
    assert "agent · synthetic" in site.trends_index()
    html = site.trends_page("agent", "synthetic")
    assert html.count('class="point"') >= 2  # pass rate over the two finished runs
    with pytest.raises(NotFound):
        site.trends_page("agent", "..")


def test_missing_dir_is_a_config_error(tmp_path: Path) -> None:
    from assay.errors import ConfigError

    with pytest.raises(ConfigError, match="--dir"):
        Site(tmp_path / "nope")


def test_a_run_page_does_not_read_the_journal(tmp_path: Path) -> None:
    """What keeps a big run fast: its page comes from scorecard.json; results.jsonl is indexed only when a
    case page is opened."""
    write_synthetic_run(tmp_path / "r", 30)
    site = Site(tmp_path)
    run = site.run("r")
    site.run_page("r")
    assert run._index is None
    site.case_page("r", "case-00003")
    assert run._index is not None and len(run.index.lines) == 30


def test_the_runs_list_reads_only_the_scorecards_head(tmp_path: Path) -> None:
    write_synthetic_run(tmp_path / "r", 30)
    site = Site(tmp_path)
    assert "r" in site.index()
    run = site.run("r")
    assert "CardHead" in run._cache and "Scorecard" not in run._cache  # cases not validated for the list
    site.run_page("r")
    assert "Scorecard" in run._cache
