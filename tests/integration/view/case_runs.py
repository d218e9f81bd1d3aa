"""Real runs of the task, code and sessions benchmarks for the viewer's case pages, made offline with the
helpers of their own integration tests (scripted agents and judges; the code pr suite replays its reference
solutions). Each agent answers with markup, which every page must show as text."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import yaml

TESTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS / "integration" / "evals" / "tasks"))
sys.path.insert(0, str(TESTS / "fixtures" / "sessions"))
from acme_repo import make_repo  # noqa: E402
from tasks_fixtures import agent_script, grades, run_tasks, write_script, write_tasks_dir  # noqa: E402

#: markup in an agent's answer: the pages show it as text, never as an element
INJECTED = "<script>window.__pwned = 1</script><b>bold</b>"
SESSIONS_CWD = "/home/dev/src/acme-app"


def _cli(*argv: str) -> int:
    from assay.cli._main import main

    try:
        main(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _tasks(base: Path, runs: Path) -> None:
    tasks_dir = write_tasks_dir(base / "tasks-src")
    agent = write_script(
        base / "tasks-agent.yaml", agent_script(claim=f"Fixed add; pytest: 1 passed. {INJECTED}")
    )
    judge = write_script(base / "tasks-judge.yaml", [grades(fix_add=4, explain=5)])
    code, out, run_dir = run_tasks(base, tasks_dir, agent, judge, "--out", str(runs / "tasks"))
    assert code == 0 and run_dir is not None, out


def _sessions(base: Path, runs: Path) -> None:
    repo = make_repo(base / "acme-app")
    grade = lambda s, why: {"text": json.dumps({"score": s, "claims_unseen_work": False, "reason": why})}  # noqa: E731
    agent = base / "sessions-agent.yaml"
    agent.write_text(yaml.safe_dump({
        "replies": [{"match": "retry limit", "times": 1, "tool_calls": [{"name": "read_file", "arguments": {"path": "client.py"}}]},
                    {"match": "retry limit", "times": 1, "text": f"MAX_RETRIES = 5 in client.py. {INJECTED}"}],
        "default": {"text": "Here is my answer."},
    }))  # fmt: skip
    judge = base / "sessions-judge.yaml"
    judge.write_text(yaml.safe_dump({
        "replies": [{"match": "retry limit", **grade(4, "names the constant and its file")}],
        "default": grade(2, "thinner than the reference"),
    }))  # fmt: skip
    code = _cli(
        "eval", "sessions", "--source", str(TESTS / "fixtures" / "sessions" / "claude"),
        "--cwd-map", f"{SESSIONS_CWD}={repo}", "--model", f"scripted/{agent}",
        "--judge-model", f"scripted/{judge}", "--out", str(runs / "sessions"), "-j", "1",
        "--work-root", str(base / "sessions-work"),
    )  # fmt: skip
    assert code == 0


def make_case_runs(base: Path) -> Path:
    """``base/results`` with the runs ``tasks``, ``code`` (two projects: a fix and a refusal) and ``sessions``."""
    runs = base / "results"
    saved = {k: os.environ.get(k) for k in ("ASSAY_NO_LOCK", "ASSAY_HOME", "ASSAY_PROGRESS")}
    os.environ.update(ASSAY_NO_LOCK="1", ASSAY_HOME=str(base / "home"), ASSAY_PROGRESS="off")
    for name in ("ASSAY_MODEL", "ASSAY_JUDGE_MODEL", "ASSAY_HARNESS", "ASSAY_SUITE", "ASSAY_TASKS"):
        saved.setdefault(name, os.environ.pop(name, None))
    try:
        _tasks(base, runs)
        projects = "fix-median,refuse-eval-input"
        assert _cli("eval", "code", "--projects", projects, "--out", str(runs / "code")) == 0
        _sessions(base, runs)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return runs
