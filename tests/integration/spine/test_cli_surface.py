"""What a new user meets at the CLI: whole run ids, finish times, early refusals, honest help."""

from __future__ import annotations

import itertools
import json
import re
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from spine_cli import assay, start_assay

from assay.runs import load_meta, read_journal

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("columns", ["80", "120"])
def test_runs_list_never_cuts_a_run_id(toy_env, tmp_path, columns):
    results = tmp_path / "results"
    ids = ["retrieval-rag-pr-20261201T103000Z-2", "memory-pr-20261201T103000Z"]
    for i, run_id in enumerate(ids):
        args = ["eval", "toy", "--cases", "5", "--fail-every", str(2 + i), "--out", str(results / run_id)]
        assert assay(args, toy_env, tmp_path).returncode == 0
    assert (
        assay(["eval", "toy", "--cases", "3", "--results-dir", str(results)], toy_env, tmp_path).returncode
        == 0
    )
    ids.append(next(p.name for p in results.iterdir() if p.name.startswith("toy-pr-")))  # a default id
    ids.append("retrieval-code-pr-20261201T111846Z")  # an outage: the longest list of statuses
    args = [
        "eval",
        "toy",
        "--cases",
        "8",
        "--fail-every",
        "2",
        "--outage-after",
        "3",
        "--out",
        str(results / ids[-1]),
    ]
    assert assay(args, toy_env, tmp_path).returncode == 3
    res = assay(["runs", "list", "--dir", str(results)], dict(toy_env, COLUMNS=columns), tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert max(map(len, lines)) <= int(columns)
    for run_id in ids:
        assert any(re.search(rf"(^|\s){re.escape(run_id)}(\s|$)", ln) for ln in lines), (run_id, res.stdout)
    assert "…" not in res.stdout and "40.0%" in res.stdout and "60.0%" in res.stdout


def test_meta_records_finish_time_and_duration_and_resume_updates_them(toy_env, tmp_path):
    out = tmp_path / "run"
    proc = start_assay(
        ["eval", "toy", "--cases", "30", "--delay", "0.05", "-j", "1", "--out", str(out)], toy_env, tmp_path
    )
    deadline = time.monotonic() + 60
    while len(read_journal(out / "results.jsonl")) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # killed: no finish recorded
    proc.wait(timeout=30)
    assert load_meta(out).finished_at is None and load_meta(out).elapsed_s is None
    assert assay(["eval", "toy", "--resume", str(out)], toy_env, tmp_path).returncode == 0
    first = load_meta(out)
    assert first.finished_at is not None and first.finished_at > first.started_at
    assert 0 < first.elapsed_s < (first.finished_at - first.started_at).total_seconds() + 1
    raw = json.loads((out / "meta.json").read_text())
    assert datetime.fromisoformat(raw["finished_at"].replace("Z", "+00:00")) == first.finished_at
    assert assay(["eval", "toy", "--resume", str(out)], toy_env, tmp_path).returncode == 0
    again = load_meta(out)
    assert again.finished_at > first.finished_at and again.elapsed_s >= first.elapsed_s
    shown = assay(["runs", "show", str(out)], toy_env, tmp_path).stdout
    assert f"finished {again.finished_at:%Y-%m-%d %H:%M:%S} UTC, ran " in shown


def test_save_baseline_from_one_iteration_is_refused_before_running(toy_env, tmp_path):
    res = assay(
        ["eval", "toy", "--cases", "3", "--delay", "5", "--save-baseline", "bl", "--out", "run"],
        toy_env,
        tmp_path,
    )
    assert res.returncode == 1
    assert res.stderr.startswith("error: --save-baseline bl: a 1-iteration run")
    assert "--iterations 3" in res.stderr and "--force" in res.stderr
    assert not (tmp_path / "run").exists() and not (tmp_path / "bl").exists()
    ok = assay(
        ["eval", "toy", "--cases", "3", "--save-baseline", "bl", "--force", "--out", "run"], toy_env, tmp_path
    )
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "bl" / "scorecard.json").is_file()


@pytest.fixture
def memory_db(toy_env: dict[str, str], tmp_path: Path) -> Path:
    """A memory database holding one fact (the user lives in Biscuitville), built by the real pipeline."""
    db = tmp_path / "m.db"
    code = (
        "import asyncio\n"
        "from assay.embed import HashEmbedder\n"
        "from assay.memory import ManualClock, init_memory\n"
        "async def main():\n"
        f"    mem = init_memory({str(db)!r}, embedder=HashEmbedder(), clock=ManualClock())\n"
        "    chat, _ = await mem.start_chat('c1')\n"
        "    tool = ('remember', {'content': 'User lives in Biscuitville', 'attribute': 'city', 'evidence': 'I live in Biscuitville.'})\n"
        "    await mem.process_query(chat, 'I live in Biscuitville.', memory_tools=[tool])\n"
        "    mem.store.close()\n"
        "asyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=toy_env, timeout=60)
    return db


def _holds_biscuit(db: Path, env: dict[str, str], cwd: Path) -> bool:
    shown = assay(["memory", "show", "--db", str(db), "--json"], env, cwd)
    assert shown.returncode == 0, shown.stderr
    return "Biscuit" in shown.stdout


def test_memory_forget_without_a_terminal_asks_for_yes(toy_env, tmp_path, memory_db):
    res = assay(
        ["memory", "forget", "Biscuitville", "--db", str(memory_db)],
        toy_env,
        tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert res.returncode == 1
    assert res.stderr.strip() == "error: forgetting cannot be undone: use --yes when not interactive"
    assert _holds_biscuit(memory_db, toy_env, tmp_path)
    args = ["memory", "forget", "Biscuitville", "--yes", "--db", str(memory_db)]
    done = assay(args, toy_env, tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "forgot 1 item" in done.stdout
    assert not _holds_biscuit(memory_db, toy_env, tmp_path)


def test_memory_forget_at_a_terminal_still_asks(toy_env, tmp_path, memory_db):
    import os
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "memory", "forget", "Biscuitville", "--db", str(memory_db)],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=toy_env,
        cwd=tmp_path,
        text=True,
    )
    os.close(follower)
    os.write(leader, b"n\n")
    out, err = proc.communicate(timeout=60)
    os.close(leader)
    assert "Forget 'Biscuitville' permanently?" in out
    assert proc.returncode == 130 and err.strip() == "aborted"
    assert _holds_biscuit(memory_db, toy_env, tmp_path)


def _help(args: list[str], env: dict[str, str], cwd: Path) -> str:
    res = assay([*args, "--help"], env, cwd)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_help_advertises_only_benchmarks_that_exist(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if k != "ASSAY_PLUGINS"}
    env["ASSAY_HOME"], env["COLUMNS"] = str(tmp_path / "home"), "200"
    top = _help([], env, tmp_path)
    listed = _help(["eval"], env, tmp_path)
    commands = re.findall(r"^  (\S+)\s{2,}", listed.split("Commands:")[1], flags=re.M)
    assert commands, listed
    for name in commands:  # each one listed runs
        _help(["eval", name], env, tmp_path)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in set(re.findall(r"`assay eval ([a-z-]+)", readme)):
        assert name in commands, f"README advertises `assay eval {name}`"
    # `assay --help` names the benchmarks `assay eval` has (and no other)
    lines = top.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("eval "))
    more = itertools.takewhile(lambda ln: ln.startswith(" " * 8), lines[at + 1 :])  # wrapped lines
    line = " ".join([lines[at], *(ln.strip() for ln in more)])
    named = re.sub(r"\([^)]*\)", "", line.split("Run a benchmark:", 1)[1]).strip(" .").split(",")
    assert sorted(n.strip() for n in named) == sorted(set(commands) - {"noise"}), line
