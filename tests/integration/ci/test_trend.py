"""`assay trend` over real runs of the small CI benchmark, week after week: points carried forward from the
previous trend.json (a run already in it not counted twice), the PNG, and move suggestions for a case that met
the target in each of the last three runs (printed, never applied)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._main import cli


def _run(tmp_path: Path, name: str, *args: str) -> Path:
    argv = ["eval", "cibench", "--out", str(tmp_path / name), "-n", "2", "--no-outage", *args]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["assay", *argv])
        res = CliRunner().invoke(cli, argv)
    assert res.exit_code == 0, res.output
    return tmp_path / name


def _trend(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["trend", *args])
    return res.exit_code, res.output + (str(res.exception) if res.exception else "")


def test_trend_week_after_week(tmp_path: Path) -> None:
    cases = ["--scenario", "ok-1,flip,bad"]
    weeks = [
        _run(tmp_path, "w1", *cases, "--weak"),
        _run(tmp_path, "w2", *cases),
        _run(tmp_path, "w3", *cases),
    ]
    code, out = _trend(str(weeks[0]), "--target", "0.8", "--out", str(tmp_path / "t1"))
    assert code == 0, out
    t1 = tmp_path / "t1" / "trend.json"
    code, out = _trend(
        str(weeks[1]), str(weeks[0]), "--target", "0.8", "--previous", str(t1), "--out", str(tmp_path / "t2")
    )
    assert code == 0, out
    t2 = json.loads((tmp_path / "t2" / "trend.json").read_text(encoding="utf-8"))
    assert [p["run_id"] for p in t2["points"]] == ["w1", "w2"]  # w1 carried, not counted twice
    assert [p["value"] for p in t2["points"]] == pytest.approx([1 / 3, 2 / 3])
    assert "suggest:" not in out  # fewer points than the window of three
    assert (tmp_path / "t2" / "trend.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    code, out = _trend(
        str(weeks[2]),
        "--target",
        "0.8",
        "--previous",
        str(tmp_path / "t2" / "trend.json"),
        "--out",
        str(tmp_path / "t3"),
    )
    t3 = json.loads((tmp_path / "t3" / "trend.json").read_text(encoding="utf-8"))
    assert [p["run_id"] for p in t3["points"]] == ["w1", "w2", "w3"]
    # ok-1 passed every run; flip failed in week 1; bad never passed
    assert [s.split(":")[0] for s in t3["suggestions"]] == ["ok-1"]
    assert "suggest: ok-1: met the target 80% in each of the last 3 runs" in out


def test_trend_bad_input_names_the_flag(tmp_path: Path) -> None:
    run = _run(tmp_path, "w1", "--scenario", "ok-1")
    code, out = _trend(str(run), "--metric", "nope", "--target", "0.5", "--out", str(tmp_path / "x"))
    assert code == 1 and "--metric 'nope'" in out
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    code, out = _trend(
        str(run), "--target", "0.5", "--previous", str(tmp_path / "bad.json"), "--out", str(tmp_path / "x")
    )
    assert code == 1 and "not a trend.json" in out
    code, out = _trend(str(run), "--target", "5", "--out", str(tmp_path / "x"))
    assert code == 1 and "--target 5" in out
    other = tmp_path / "full"
    argv = ["eval", "cibench", "--suite", "full", "--out", str(other), "--no-outage", "--scenario", "ok-1"]
    assert CliRunner().invoke(cli, argv).exit_code == 0
    code, out = _trend(str(run), str(other), "--target", "0.5", "--out", str(tmp_path / "x"))
    assert code == 1 and "one benchmark and suite" in out and "cibench · full" in out
