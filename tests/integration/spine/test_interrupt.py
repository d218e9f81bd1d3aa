"""Ctrl-C stops a real eval within a few seconds wherever its work is: in a coroutine, a worker thread, a
child process, the event loop's own thread, or a thread that never looks at the cancel flag."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from spine_cli import start_assay

from assay.runs import Status, load_meta, load_scorecard, read_journal

FAST = 3  # attempts that finish before the slow work begins


def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def _interrupt(
    toy_env: dict[str, str], tmp_path: Path, knobs: list[str], finished: int, sig: int = signal.SIGINT
) -> tuple[float, str]:
    """Start a toy eval, wait until its slow work runs, send ``sig``; return (seconds to exit, stderr)."""
    out, marker = tmp_path / "run", tmp_path / "marker"
    proc = start_assay(
        ["eval", "toy", "--cases", "12", "-j", "1", "--out", str(out), "--work-marker", str(marker), *knobs],
        dict(toy_env, ASSAY_PROGRESS_INTERVAL="0.2"),
        tmp_path,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(lambda: marker.exists() and len(read_journal(out / "results.jsonl")) >= finished)
        time.sleep(0.3)  # well inside the slow work
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert f"resume with: assay eval toy --resume {out}" in err
    # the stop and resume line is the last thing said (was: a second "interrupted" line after it)
    assert (
        err.rstrip().endswith(f"interrupted; resume with: assay eval toy --resume {out}")
        and "aborted" not in err
    )
    assert "Traceback" not in err
    journal = read_journal(out / "results.jsonl")
    assert len(journal) == finished and all(a.status is Status.PASS for a in journal)
    card = load_scorecard(out)
    assert card.summary.counts["PASS"] == finished and not card.complete
    assert load_meta(out).finished_at is not None
    return took, err


@pytest.mark.parametrize(
    "knob",
    [
        "--thread-work",  # a worker thread ticking a progress phase
        "--child-work",  # a worker thread waiting on a child process
        "--block-work",  # a worker thread that never looks at the cancel flag
    ],
)
def test_ctrl_c_during_threaded_work_stops_within_3s_keeping_finished_attempts(toy_env, tmp_path, knob):
    took, err = _interrupt(toy_env, tmp_path, ["--work-after", str(FAST), knob, "60"], FAST)
    assert took < 3.0, f"took {took:.1f}s to stop"
    if knob == "--thread-work":  # the interrupted phase says it stopped, not that it is done
        ends = [
            ln for ln in err.splitlines() if ln.startswith("progress: toy work:") and ln.endswith(", stopped")
        ]
        assert ends and not any(ln.endswith(", done") for ln in err.splitlines() if "toy work" in ln), err
    if knob == "--child-work":
        pid = int((tmp_path / "marker").read_text())
        _wait_for(lambda: not _alive(pid), timeout=2)


def test_sigterm_stops_the_run_as_ctrl_c_does_and_its_child_with_it(toy_env, tmp_path):
    # a cancelled CI job or `kill`: the journal is kept, the resume command printed, no child left running
    took, _ = _interrupt(
        toy_env, tmp_path, ["--work-after", str(FAST), "--child-work", "60"], FAST, sig=signal.SIGTERM
    )
    assert took < 3.0, f"took {took:.1f}s to stop"
    pid = int((tmp_path / "marker").read_text())
    _wait_for(lambda: not _alive(pid), timeout=2)


def test_ctrl_c_during_setup_in_the_loop_thread_stops_within_3s(toy_env, tmp_path):
    took, _ = _interrupt(toy_env, tmp_path, ["--setup-work", "60"], 0)
    assert took < 3.0, f"took {took:.1f}s to stop"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's reaping is left


def test_plain_progress_lines_while_a_long_phase_runs_without_a_terminal(toy_env, tmp_path):
    env = dict(toy_env, ASSAY_PROGRESS_INTERVAL="0.2")
    out = tmp_path / "run"
    res = subprocess.run(
        [*_cli(), "eval", "toy", "--cases", "2", "-j", "1", "--out", str(out), "--thread-work", "1"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("progress: ")]
    assert lines[0] == "progress: run: 2 attempts to do"
    # the attempt counter and the worker's own phase, every 0.2 s while it runs (about 10 lines in 2 s)
    ticking = [ln for ln in lines if "toy work: " in ln and "/20 steps" in ln]
    assert len(ticking) >= 4, lines
    assert any(ln.startswith("progress: run: 1/2 attempts (PASS=1)") for ln in lines), lines
    assert lines[-1].startswith("progress: run: 2/2 attempts (PASS=2)") and lines[-1].endswith(", done")


def test_a_slow_setup_is_not_silent(toy_env, tmp_path):
    env = dict(toy_env, ASSAY_PROGRESS_INTERVAL="0.2")
    res = subprocess.run(
        [*_cli(), "eval", "toy", "--cases", "1", "--out", str(tmp_path / "run"), "--setup-work", "1"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("progress: run: setting up")]
    assert len(lines) >= 3 and lines[-1].endswith(", done"), res.stderr


def test_progress_env_vars_are_checked(toy_env, tmp_path):
    for var, value in (("ASSAY_PROGRESS", "loud"), ("ASSAY_PROGRESS_INTERVAL", "0")):
        res = subprocess.run(
            [*_cli(), "eval", "toy", "--cases", "1", "--out", str(tmp_path / var)],
            env=dict(toy_env, **{var: value}),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 1 and res.stderr.startswith(f"error: {var} must be"), res.stderr
        assert not (tmp_path / var).exists()


def _cli() -> list[str]:
    import sys

    return [sys.executable, "-m", "assay"]


def test_progress_off_prints_nothing(toy_env, tmp_path):
    env = dict(toy_env, ASSAY_PROGRESS="off", ASSAY_PROGRESS_INTERVAL="0.1")
    res = subprocess.run(
        [*_cli(), "eval", "toy", "--cases", "2", "--out", str(tmp_path / "run"), "--thread-work", "0.5"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0 and "progress:" not in res.stderr
    assert os.path.exists(tmp_path / "run" / "scorecard.json")
