"""The question tasks' reference answers hold on the project they ask about (and their wrong answers do not):
each claim run against a prepared copy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from assay.evals._workspace import git
from assay.evals.tasks._project import prepare_task
from assay.evals.tasks._tasks_load import load_tasks

ROOT = Path(__file__).resolve().parents[4]
TASKS_DIR = ROOT / "eval" / "tasks"
TASKS = load_tasks(TASKS_DIR / "tasks.json")


def run(workdir: Path, code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workdir,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(workdir)},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_code_review_draft_reply_and_readme_answers(tmp_path: Path) -> None:
    w = prepare_task(TASKS.task("readme-vs-code"), TASKS_DIR / "toybox", tmp_path).workdir
    got = run(
        w,
        "from toybox.cli import check_limit, build_parser\n"
        "print(check_limit(0) is None, len(list(range(5))[-0:]))\n"
        "print(build_parser().parse_args(['events', 'f']).limit)\n",
    )
    assert got == ["True", "5", "20"]  # 0 passes the check, [-0:] is everything, the default is 20
    assert "defaults to 50" in (w / "README.md").read_text()  # the README's wrong answer


def test_find_duplicate_answer(tmp_path: Path) -> None:
    w = prepare_task(TASKS.task("find-duplicate"), TASKS_DIR / "toybox", tmp_path).workdir
    got = run(
        w,
        "from toybox.timeparse import parse_timestamp as a\n"
        "from toybox.logs import parse_log_time as b\n"
        "from toybox.events import parse_event_time as c\n"
        "for s in ('2024-03-01T00:00:00z', '2024-03-01T00:00:00ZZ'):\n"
        "    out = []\n"
        "    for f in (a, b, c):\n"
        "        try:\n            f(s); out.append('ok')\n"
        "        except ValueError:\n            out.append('err')\n"
        "    print(','.join(out))\n",
    )
    assert got == ["err,err,err", "err,err,ok"]  # all reject z; only rstrip('Z') takes ZZ


def test_review_patch_answer(tmp_path: Path) -> None:
    w = prepare_task(TASKS.task("review-patch"), TASKS_DIR / "toybox", tmp_path).workdir
    git(w, "apply", "patches/retry-fix.patch")
    got = run(
        w,
        "from toybox.jobqueue import Job, drain\n"
        "for n in (0, 1, 2):\n"
        "    print(drain([Job('a', retries=n)], lambda j: False)[1]['a'])\n",
    )
    assert got == ["1", "1", "2"]  # no more endless loop, but N tries instead of 1 + N


def test_triage_answer(tmp_path: Path) -> None:
    w = prepare_task(TASKS.task("triage-issues"), TASKS_DIR / "toybox", tmp_path).workdir
    labels = {p.stem: p.read_text().splitlines()[1] for p in (w / "issues").glob("0*.md")}
    assert labels["003"] == "labels: security" and labels["007"] == "labels: feature"
    assert "shell=True" in (w / "toybox" / "archive.py").read_text()
    assert "lowercase z" in (w / "issues" / "005.md").read_text()
