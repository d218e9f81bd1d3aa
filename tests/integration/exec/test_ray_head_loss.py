"""The Ray head lost mid-run: the run stops as an outage with the resume command, and --resume finishes it.

This module kills its own head (the ``ray_head`` fixture starts one per module).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

import assay.exec._ray as ray_exec
from assay.cli._main import main


def _journal(run_dir: Path) -> list[dict]:
    path = run_dir / "results.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _kill_head_when(run_dir: Path, finished: int, head: list[psutil.Process], killed: list[str]) -> None:
    """Once ``finished`` attempts are journaled, kill this process's head (GCS and raylet) by pid."""
    deadline = time.monotonic() + 60
    while len(_journal(run_dir)) < finished and time.monotonic() < deadline:
        time.sleep(0.05)
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if proc.name() in ("gcs_server", "raylet"):  # the head, and what it started (its agents)
                head.extend([proc, *proc.children(recursive=True)])
            elif any("/ray/" in part for part in proc.cmdline()):  # Ray's own helpers (log monitor, ...)
                head.append(proc)
    for proc in head:  # never another child of this process (a shared model server of other tests)
        with contextlib.suppress(psutil.Error):
            if proc.name() in ("gcs_server", "raylet"):
                proc.kill()
                killed.append(proc.name())


@pytest.fixture
def head_processes() -> Iterator[list[psutil.Process]]:
    """The head's processes the test kills; the ones the kill orphans (its agents) are ended after it."""
    procs: list[psutil.Process] = []
    yield procs
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            if proc.is_running() and proc.name() not in ("gcs_server", "raylet"):
                proc.kill()


def test_head_stopped_mid_run_is_an_outage_then_resume_finishes(
    ray_head: object,
    head_processes: list[psutil.Process],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_PLUGINS", "ray_subjects:SleepBenchmark")
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setattr(ray_exec, "PROBE_EVERY_S", 0.2)
    monkeypatch.setattr(ray_exec, "PROBE_TIMEOUT_S", 1.0)
    run_dir, marks = tmp_path / "run", tmp_path / "marks"
    marks.mkdir()
    args = ["eval", "raysleep", "--cases", "8", "--sleep", "0.4", "--marks", str(marks), "-j", "2"]
    killed: list[str] = []
    killer = threading.Thread(target=_kill_head_when, args=(run_dir, 2, head_processes, killed))
    killer.start()
    with pytest.raises(SystemExit) as info:
        main([*args, "--executor", "ray", "--out", str(run_dir)])
    killer.join()
    assert sorted(killed) == ["gcs_server", "raylet"]
    assert info.value.code == 3  # an outage, like a backend's
    err = capsys.readouterr().err
    assert "error: run stopped: backend outage: the Ray head at auto did not answer within 1s" in err
    assert f"resume with: assay eval raysleep --resume {run_dir}" in err

    records = _journal(run_dir)  # whole: one record per attempt, nothing measured lost or counted twice
    assert sorted(r["case_id"] for r in records) == [f"c{i:02d}" for i in range(8)]
    statuses = {r["case_id"]: r["status"] for r in records}
    assert set(statuses.values()) <= {"PASS", "INFRA_ERROR", "NOT_RUN"}
    assert list(statuses.values()).count("INFRA_ERROR") == 1 and "NOT_RUN" in statuses.values()
    passed = {c for c, s in statuses.items() if s == "PASS"}
    assert len(passed) >= 2

    with pytest.raises(SystemExit) as info:  # resumed (here on this machine): only the unmeasured ones run
        main(["eval", "raysleep", "--resume", str(run_dir)])
    assert info.value.code == 0
    latest = {r["case_id"]: r["status"] for r in _journal(run_dir)}
    assert set(latest.values()) == {"PASS"} and len(latest) == 8
    for case in passed:
        assert len((marks / f"{case}-i0").read_text().split()) == 1  # a measured attempt is not run again
