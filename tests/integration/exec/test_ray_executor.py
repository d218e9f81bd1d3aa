"""`--executor ray` on a local head: pr suites equal the local executor's; lost workers; outages; resources."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ray_subjects import SleepBenchmark

from assay.cli._main import cli
from assay.errors import ConfigError
from assay.exec import RunOptions, run_benchmark
from assay.runs.records import Status

#: detail keys that hold clock readings, which differ between any two runs (the rest must not)
_TIMING = re.compile(r"(^|_)(ms|s|elapsed|latency|seconds|time|duration|p50|p90|p95|p99)($|_)")


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if not _TIMING.search(k)}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    if isinstance(value, str):  # a clock reading quoted in text: pytest's "1 failed in 0.29s"
        return re.sub(r"\b\d+(\.\d+)?s\b", "#s", value)
    return value


def _journal(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]


def _results(run_dir: Path) -> dict[tuple[str, int], tuple[Any, ...]]:
    """Each attempt's case, status, score, metrics, details and error type, timing aside."""
    out = {}
    for r in _journal(run_dir):
        err = (r.get("error") or {}).get("type")
        key = (r["case_id"], r["iteration"])
        out[key] = (r["status"], r["score"], _untimed(r["metrics"]), _untimed(r["details"]), err)
    return out


def _eval(args: list[str], out: Path) -> Path:
    result = CliRunner().invoke(cli, ["eval", *args, "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


FAST_SUITES = [["memory", "--suite", "pr"], ["retrieval", "--component", "rag", "--suite", "pr"]]
SLOW_SUITES = [["agent", "--suite", "pr"], ["code", "--suite", "pr"]]


def _same_as_local(args: list[str], tmp_path: Path) -> None:
    local = _eval(args, tmp_path / "local")
    remote = _eval([*args, "--executor", "ray"], tmp_path / "ray")
    want, got = _results(local), _results(remote)
    assert set(got) == set(want) and len(_journal(remote)) == len(want)  # one record per attempt
    for key in want:
        assert got[key] == want[key], key
    assert _files(local) <= _files(remote)  # what the workers wrote came back to the run directory


def _files(run_dir: Path) -> set[str]:
    """The run directory's files; hashes in names (a cache key of an absolute path) made alike."""
    names = (p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file())
    return {re.sub(r"([0-9a-f]{2}/)?[0-9a-f]{16,}", "#", n) for n in names}


@pytest.mark.parametrize("args", FAST_SUITES, ids=lambda a: "-".join(a[:3:2]))
def test_pr_suite_on_ray_equals_local(ray_head: object, tmp_path: Path, args: list[str]) -> None:
    _same_as_local(args, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("args", SLOW_SUITES, ids=lambda a: a[0])
def test_slower_pr_suite_on_ray_equals_local(ray_head: object, tmp_path: Path, args: list[str]) -> None:
    _same_as_local(args, tmp_path)


def _sleep_run(tmp_path: Path, **options: Any) -> tuple[Any, Path]:
    marks = tmp_path / "marks"
    marks.mkdir(exist_ok=True)
    opts = RunOptions(executor="ray", results_dir=tmp_path / "results", max_concurrency=2, command_line=["t"])
    result = run_benchmark(SleepBenchmark, {"cases": 4, "marks": str(marks), **options}, opts)
    return result, marks


def _tries(marks: Path, case: str) -> list[int]:
    return [int(x) for x in (marks / f"{case}-i0").read_text().split()]


def test_lost_worker_is_retried_once_then_infra_error(ray_head: object, tmp_path: Path) -> None:
    result, marks = _sleep_run(tmp_path, crash_once="c01", crash_always="c02")
    records = _journal(result.run_dir)
    assert sorted((r["case_id"], r["iteration"]) for r in records) == [(f"c0{i}", 0) for i in range(4)]
    by_case = {r["case_id"]: r for r in records}
    # lost on its first try, retried in another worker process, measured once
    assert by_case["c01"]["status"] == "PASS" and len(_tries(marks, "c01")) == 2
    assert by_case["c01"]["details"]["pid"] != _tries(marks, "c01")[0]
    # lost on the try and the retry: INFRA_ERROR (not measured, never a failure), and not tried a third time
    assert by_case["c02"]["status"] == "INFRA_ERROR" and len(_tries(marks, "c02")) == 2
    assert by_case["c02"]["error"]["type"] == "WorkerLost"
    assert [by_case[c]["status"] for c in ("c00", "c03")] == ["PASS", "PASS"]
    assert len(_tries(marks, "c00")) == len(_tries(marks, "c03")) == 1
    summary = result.scorecard.summary
    assert summary.counts[Status.INFRA_ERROR.value] == 1 and summary.counts[Status.FAIL.value] == 0
    assert summary.measured == 3


def test_outage_on_a_worker_stops_the_run_like_locally(ray_head: object, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    opts = RunOptions(executor="ray", results_dir=tmp_path / "results", max_concurrency=1, command_line=["t"])
    result = run_benchmark(SleepBenchmark, {"cases": 4, "marks": str(marks), "outage": "c01"}, opts)
    assert result.exit_code == 3
    assert result.stopped_reason == "backend outage: scripted backend outage at c01"
    statuses = [(r["case_id"], r["status"]) for r in _journal(result.run_dir)]
    assert statuses == [("c00", "PASS"), ("c01", "INFRA_ERROR"), ("c02", "NOT_RUN"), ("c03", "NOT_RUN")]
    assert not (marks / "c02-i0").exists()  # nothing started after the outage


def test_resources_no_node_has_are_refused_before_anything_runs(ray_head: object, tmp_path: Path) -> None:
    opts = RunOptions(executor="ray", results_dir=tmp_path / "results", command_line=["t"])
    with pytest.raises(ConfigError, match=r"sandbox 1 \(the cluster has 0\)"):
        run_benchmark(SleepBenchmark, {"cases": 2, "fence": True}, opts)
    assert not any((tmp_path / "results").glob("*"))  # no half-made run directory


def test_a_worker_reading_another_suite_stops_the_run_as_a_configuration_error(
    ray_head: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_TEST_CASES", "3")  # the driver's suite has 3 cases; the workers (no such var) 2
    opts = RunOptions(executor="ray", results_dir=tmp_path / "results", max_concurrency=1, command_line=["t"])
    result = run_benchmark(SleepBenchmark, {"cases": 2, "cases_env": "RAY_TEST_CASES"}, opts)
    assert result.exit_code == 1
    assert (
        result.stopped_reason is not None
        and "reads a different 'pr' suite than the driver" in result.stopped_reason
    )
    records = _journal(result.run_dir)
    assert [r["status"] for r in records] == ["NOT_RUN"] * 3  # nothing measured, nothing counted as failed
