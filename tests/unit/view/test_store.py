"""The viewer's lazy reading of run directories: the journal's offset index, resumed records, runs in
progress, discovery under --dir, and case slugs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from assay._util import Scrubber
from assay.runs._journal import Journal
from assay.runs.records import Attempt, Status
from assay.view._store import JournalIndex, RunStore, case_slug
from assay.view._synthetic import write_synthetic_run

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _journal(path: Path, attempts: list[Attempt]) -> None:
    with Journal(path, Scrubber({})) as j:
        for a in attempts:
            j.append(a)


def test_index_finds_every_record_by_offset_with_odd_ids_and_damage(tmp_path: Path) -> None:
    ids = ["plain", 'q/with "quotes"', "ünïcode/ø", "a\\b"]
    path = tmp_path / "results.jsonl"
    _journal(
        path,
        [
            Attempt(case_id=c, iteration=i, status=Status.PASS, started_at=T0, details={"n": i})
            for c in ids
            for i in range(2)
        ],
    )
    with open(path, "a") as fh:
        fh.write('{"broken": tru\n')  # a write cut by a kill
        # a record in another field order (not as pydantic writes it): read by parsing it whole
        fh.write(
            json.dumps(
                {"status": "FAIL", "case_id": "reordered", "iteration": 0, "started_at": T0.isoformat()}
            )
            + "\n"
        )
    idx = JournalIndex(path)
    assert set(idx.by_case) == {*ids, "reordered"}
    assert idx.damaged == 1
    for c in ids:
        got = idx.attempts(c)
        assert [(a.case_id, a.iteration, a.details["n"]) for a in got] == [(c, 0, 0), (c, 1, 1)]
    assert [a.status for a in idx.attempts("reordered")] == [Status.FAIL]
    assert idx.latest_status()["plain"] == ["PASS", "PASS"]


def test_a_resumed_attempt_replaces_the_earlier_record(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "r"
    write_synthetic_run(run, 4)
    _journal(
        run / "results.jsonl",
        [Attempt(case_id="case-00001", iteration=0, status=Status.INFRA_ERROR, started_at=T0)],
    )
    store = RunStore(tmp_path / "runs")
    r = store.get("r")
    assert r is not None
    # the INFRA_ERROR came after a final record of the same attempt: the final one counts
    attempts, replaced = r.attempts("case-00001")
    assert [a.status for a in attempts] in ([Status.PASS], [Status.FAIL]) and replaced == 1


def test_a_run_in_progress_shows_its_progress(tmp_path: Path) -> None:
    write_synthetic_run(tmp_path / "runs" / "live", 40, finish=False)
    r = RunStore(tmp_path / "runs").get("live")
    assert r is not None and r.scorecard is None and r.in_progress
    assert r.progress() == (20, 40)


def test_discovery_nested_runs_and_symlinks_out(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    write_synthetic_run(root / "noise" / "n1", 2)
    write_synthetic_run(root / "top", 2, seed=1)
    write_synthetic_run(tmp_path / "elsewhere", 2, seed=2)
    (root / "link-out").symlink_to(tmp_path / "elsewhere")
    (root / "link-in").symlink_to(root / "top")
    (root / ".hidden").mkdir()
    store = RunStore(root)
    keys = [r.key for r in store.runs()]
    assert sorted(keys) == ["link-in", "noise~n1", "top"]
    assert store.get("link-out") is None and store.get("../elsewhere") is None
    assert store.get("noise~n1").path == root / "noise" / "n1"  # type: ignore[union-attr]


def test_a_changed_scorecard_is_read_again(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    write_synthetic_run(root / "r", 4)
    store = RunStore(root)
    run = store.get("r")
    assert run is not None and run.scorecard is not None
    (root / "r" / "scorecard.json").write_text("{not json")
    assert run.scorecard is None and "unreadable" in (run.card_problem or "")


@pytest.mark.parametrize("cid", ["q/a", "a b", "..", ".x", "x" * 300, "é"])
def test_case_slugs_are_file_safe_and_distinct(cid: str) -> None:
    slug = case_slug(cid)
    assert all(ch.isalnum() or ch in "._-" for ch in slug) and not slug.startswith(".")
    assert len(slug) <= 80
    assert case_slug(cid + "!") != slug
    assert case_slug("plain-id_1.2") == "plain-id_1.2"
