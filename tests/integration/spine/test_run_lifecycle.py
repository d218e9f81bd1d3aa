"""The spine's contracts, end to end through the real CLI in subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from spine_cli import assay, start_assay

from assay.runs import FINAL_STATUSES, Status, load_scorecard, read_journal


def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def _lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


def test_sigkill_mid_run_then_resume_measures_every_case_exactly_once(toy_env, tmp_path):
    out = tmp_path / "run"
    proc = start_assay(
        ["eval", "toy", "--cases", "30", "--delay", "0.1", "-j", "3", "--iterations", "2", "--out", str(out)],
        toy_env,
        tmp_path,
    )
    _wait_for(lambda: _lines(out / "results.jsonl") >= 10)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before = read_journal(out / "results.jsonl")
    assert 10 <= len(before) < 60
    assert not (out / "scorecard.json").exists()

    done = assay(["eval", "toy", "--resume", str(out)], toy_env, tmp_path)
    assert done.returncode == 0, done.stderr

    records = read_journal(out / "results.jsonl")
    finals = Counter(a.key for a in records if a.status in FINAL_STATUSES)
    expected = {(f"c{i:03d}", it) for i in range(30) for it in range(2)}
    assert set(finals) == expected
    assert all(n == 1 for n in finals.values()), "a case was measured twice"
    card = load_scorecard(out)
    assert card.complete and card.summary.counts["NOT_RUN"] == 0
    assert card.summary.measured == 60
    # the resumed part ran under the run's recorded config (2 iterations, 30 cases)
    assert card.iterations == 2 and len(card.cases) == 30


def test_backend_outage_is_infra_error_not_fail_and_exits_3(toy_env, tmp_path):
    out = tmp_path / "run"
    res = assay(
        ["eval", "toy", "--cases", "12", "-j", "1", "--outage-after", "4", "--out", str(out)],
        toy_env,
        tmp_path,
    )
    assert res.returncode == 3, res.stderr
    assert f"--resume {out}" in res.stderr
    card = load_scorecard(out)
    counts = card.summary.counts
    assert counts["PASS"] == 4 and counts["INFRA_ERROR"] == 1 and counts["NOT_RUN"] == 7
    assert counts["FAIL"] == 0 and counts["ERROR"] == 0
    assert card.summary.pass_rate == 1.0  # the outage is not counted against the subject
    assert not card.complete


def test_outage_with_concurrency_leaves_a_resumable_journal(toy_env, tmp_path):
    out = tmp_path / "run"
    flag = tmp_path / "down"
    flag.write_text("x")
    res = assay(
        ["eval", "toy", "--cases", "8", "-j", "4", "--outage-file", str(flag), "--out", str(out)],
        toy_env,
        tmp_path,
    )
    assert res.returncode == 3
    statuses = Counter(a.status for a in read_journal(out / "results.jsonl"))
    assert Status.FAIL not in statuses and Status.PASS not in statuses
    flag.unlink()
    res = assay(["eval", "toy", "--resume", str(out)], toy_env, tmp_path)
    assert res.returncode == 0, res.stderr
    assert load_scorecard(out).summary.counts["PASS"] == 8


def test_second_concurrent_eval_exits_4_busy_naming_the_first(toy_env, tmp_path):
    first_out = tmp_path / "first"
    first = start_assay(
        ["eval", "toy", "--cases", "40", "--delay", "0.2", "-j", "1", "--out", str(first_out)],
        toy_env,
        tmp_path,
    )
    try:
        _wait_for(lambda: (first_out / "meta.json").exists())
        second = assay(["eval", "toy", "--cases", "2", "--out", str(tmp_path / "second")], toy_env, tmp_path)
        assert second.returncode == 4  # busy, not 2 (which CI reads as a regression)
        assert f"pid {first.pid}" in second.stderr
        assert "eval toy --cases 40" in second.stderr
        assert not (tmp_path / "second").exists()
        # reading never takes the lock
        assert assay(["runs", "list", "--dir", str(tmp_path)], toy_env, tmp_path).returncode == 0
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    # the dead holder's lock is reclaimed
    third = assay(["eval", "toy", "--cases", "2", "--out", str(tmp_path / "third")], toy_env, tmp_path)
    assert third.returncode == 0, third.stderr


def test_planted_secret_never_reaches_any_file_of_the_run(toy_env, tmp_path):
    env_secret = "zq81-very-private-value-93jd"
    shaped = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    env = dict(toy_env, MY_SERVICE_API_KEY=env_secret)
    out = tmp_path / "run"
    answer = f"the key is {env_secret}; also {shaped}; header Authorization: Bearer abcdefghijklmnop123456"
    res = assay(["eval", "toy", "--cases", "3", "--answer", answer, "--out", str(out)], env, tmp_path)
    assert res.returncode == 0, res.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {
        "meta.json",
        "results.jsonl",
        "scorecard.json",
        "report.md",
        "report.html",
    }
    for path in files:
        text = path.read_text(errors="replace")
        assert env_secret not in text, path
        assert shaped not in text, path
        assert "abcdefghijklmnop123456" not in text, path
    assert "[REDACTED]" in (out / "results.jsonl").read_text()
    assert "[REDACTED]" in (out / "meta.json").read_text()  # the command line carried the answer too


def test_malformed_resume_directory_gives_one_line_error(toy_env, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "meta.json").write_text('{"run_id": "x",\n "benchmark": ')
    res = assay(["eval", "toy", "--resume", str(bad)], toy_env, tmp_path)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "meta.json:2" in lines[0] and "Traceback" not in res.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    res = assay(["eval", "toy", "--resume", str(empty)], toy_env, tmp_path)
    assert res.returncode == 1 and "meta.json: missing" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_resume_refuses_a_suite_whose_cases_changed(toy_env, tmp_path):
    out = tmp_path / "run"
    assert assay(["eval", "toy", "--cases", "3", "--out", str(out)], toy_env, tmp_path).returncode == 0
    meta = json.loads((out / "meta.json").read_text())
    meta["options"]["benchmark"]["cases"] = 4
    (out / "meta.json").write_text(json.dumps(meta))
    res = assay(["eval", "toy", "--resume", str(out)], toy_env, tmp_path)
    assert res.returncode == 1 and "changed since the run started" in res.stderr


def test_wrong_flag_is_a_one_line_usage_error_exit_1(toy_env, tmp_path):
    res = assay(["eval", "toy", "--iterations", "0"], toy_env, tmp_path)
    assert res.returncode == 1 and "--iterations" in res.stderr
    assert "Traceback" not in res.stderr
    env = dict(toy_env, ASSAY_PLUGINS="nocolon")
    res = assay(["eval", "toy"], env, tmp_path)
    assert res.returncode == 1 and "ASSAY_PLUGINS" in res.stderr


def test_runs_list_and_show(toy_env, tmp_path):
    results = tmp_path / "results"
    res = assay(
        ["eval", "toy", "--cases", "4", "--fail-every", "2", "--results-dir", str(results)], toy_env, tmp_path
    )
    assert res.returncode == 0, res.stderr
    run_dir = next(results.iterdir())
    assert run_dir.name.startswith("toy-pr-")
    listing = assay(["runs", "list", "--dir", str(results)], dict(toy_env, COLUMNS="200"), tmp_path)
    assert run_dir.name in listing.stdout and "50.0%" in listing.stdout
    shown = assay(["runs", "show", str(run_dir)], toy_env, tmp_path)
    assert shown.returncode == 0 and "pass rate 50.0%" in shown.stdout
    env_iter = dict(toy_env, ASSAY_ITERATIONS="2")
    res = assay(["eval", "toy", "--cases", "2", "--out", str(tmp_path / "env")], env_iter, tmp_path)
    assert res.returncode == 0
    assert load_scorecard(tmp_path / "env").iterations == 2
    assert os.path.exists(tmp_path / "env" / "report.html")


def test_ctrl_c_leaves_a_resumable_run(toy_env, tmp_path):
    out = tmp_path / "run"
    proc = start_assay(
        ["eval", "toy", "--cases", "40", "--delay", "0.1", "-j", "2", "--out", str(out)],
        toy_env,
        tmp_path,
        stderr=subprocess.PIPE,
    )
    _wait_for(lambda: _lines(out / "results.jsonl") >= 4)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert f"--resume {out}" in err and "Traceback" not in err
    partial = load_scorecard(out)
    assert not partial.complete and partial.summary.counts["NOT_RUN"] > 0
    res = assay(["eval", "toy", "--resume", str(out)], toy_env, tmp_path)
    assert res.returncode == 0, res.stderr
    assert load_scorecard(out).summary.counts["PASS"] == 40


def test_resume_warns_about_damaged_journal_lines_and_reruns_them(toy_env, tmp_path):
    out = tmp_path / "run"
    assert assay(["eval", "toy", "--cases", "4", "--out", str(out)], toy_env, tmp_path).returncode == 0
    journal = out / "results.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    lines[1] = lines[1][:20] + "\n"  # one record damaged in the middle
    journal.write_text("".join(lines))
    res = assay(["eval", "toy", "--resume", str(out)], toy_env, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "skipped 1 damaged line(s) (2)" in res.stderr
    card = load_scorecard(out)
    assert card.complete and card.summary.counts["PASS"] == 4
