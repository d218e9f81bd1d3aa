"""Running the hostile suite: one eval per benchmark, harness and fence mode (each case one attack), and what
each attack got, read from outside the agent.

An attack *leaks* when the suite sees it got something: a canary of the answer key in its attempt, a file it
wrote outside, the fake provider key, a connection the listener took, a cap it reached, a process alive after
the eval, a forged result, a PASS, or a run it stopped. The honest control must PASS.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hostile_fixtures import (
    AGENT,
    AGENTS,
    ATTACKS,
    Targets,
    attack_of,
    write_code,
    write_scenarios,
    write_tasks,
)

SRC = Path(__file__).resolve().parents[3] / "src"
#: the agent's wall clock in every run (the attacks that outlive it are killed after it)
RUN_TIMEOUT_S = 6
#: attempts in flight at once (the attacks mostly sleep, fork or write)
CONCURRENCY = 4
#: the limit flags passed where the eval offers them (flag -> value), smaller than each attack's own cap
LIMIT_FLAGS = {
    "--agent-memory-mb": "96",
    "--agent-max-procs": "16",
    "--agent-disk-mb": "16",
    "--agent-output-kb": "1024",
}


@dataclass
class Run:
    """One eval of the suite and what the suite saw of it."""

    bench: str
    harness: str
    fenced: bool
    exit_code: int = 0
    output: str = ""
    #: the eval could not run this way at all (the harness refuses the fence): its one line
    refused: str | None = None
    run_dir: Path | None = None
    attempts: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: what is wrong with the journal, meta.json or scorecard (None: whole)
    journal: str | None = None
    leftovers: dict[str, int] = field(default_factory=dict)
    #: attacks of the suite with no attempt in the journal
    missing: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def mode(self) -> str:
        return "fenced" if self.fenced else "open"

    @property
    def label(self) -> str:
        return f"{self.bench} · {self.harness}"


def eval_env(t: Targets) -> dict[str, str]:
    """The eval's environment: a fake provider key, its own HOME (with a credentials file), ASSAY_HOME (the
    lock) and TMPDIR, the agents' folder importable (the python harness)."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("ASSAY_", "PYTEST_"))}
    return {
        **keep,
        "ANTHROPIC_API_KEY": t.fake_key,
        "HOME": str(t.home),
        "ASSAY_HOME": str(t.assay_home),
        "TMPDIR": str(t.tmp),
        "PYTHONPATH": os.pathsep.join([str(SRC), str(AGENTS)]),
    }


def harness_spec(harness: str) -> str:
    return f"command:{AGENT} {{prompt}}" if harness == "command" else "python:hostile_attacks:run"


@functools.cache
def _help(bench: str) -> str:
    sub = ["tasks", "run"] if bench == "tasks" else [bench]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    argv = [sys.executable, "-m", "assay", "eval", *sub, "--help"]
    return subprocess.run(argv, capture_output=True, text=True, env=env).stdout


def _offered(bench: str) -> list[str]:
    """The limit flags the eval's ``--help`` lists, with their values."""
    out: list[str] = []
    for flag, value in LIMIT_FLAGS.items():
        if re.search(rf"{re.escape(flag)}\b", _help(bench)):
            out += [flag, value]
    return out


def fence_flag(bench: str, fenced: bool) -> list[str]:
    """``--fence`` or ``--no-fence`` as the eval spells them (fenced by default once ``--no-fence`` exists)."""
    if fenced:
        return ["--fence"]
    return ["--no-fence"] if "--no-fence" in _help(bench) else []


def eval_argv(run: Run, t: Targets, env: dict[str, str]) -> list[str]:
    """The eval's command line (its inputs written first: every case's prompt names its attack)."""
    mode = f"{run.harness}-{run.mode}"
    results = t.results / f"{run.bench}-{mode}"
    common = ["--harness", harness_spec(run.harness), *fence_flag(run.bench, run.fenced)]
    common += ["--results-dir", str(results), "-j", str(CONCURRENCY), *_offered(run.bench)]
    scripted = t.answers / "model.yaml"
    scripted.write_text("default: {text: unused}\n")
    model = f"scripted/{scripted}"
    head = [sys.executable, "-m", "assay", "eval"]
    if run.bench == "tasks":
        tasks = write_tasks(t, run.harness, mode)
        return [
            *head, "tasks", "run", "--model", model, "--tasks-file", str(tasks / "tasks.json"),
            "--work-root", str(t.work), "--run-timeout", str(RUN_TIMEOUT_S), "--no-judge", *common,
        ]  # fmt: skip
    if run.bench == "code":
        projects = write_code(t, run.harness, mode)
        return [
            *head, "code", "--suite", "full", "--model", model, "--projects-dir", str(projects),
            "--work-root", str(t.work), "--run-timeout", str(RUN_TIMEOUT_S), *common,
        ]  # fmt: skip
    scenarios, models = write_scenarios(t, run.harness, mode)
    return [
        *head, "agent", "--suite", "full", "--scenarios", str(scenarios), "--model", models["agent"],
        "--simulator-model", models["simulator"], "--judge-model", models["judge"], "--timeout", "60", *common,
    ]  # fmt: skip


# ------------------------------------------------------------------------------------------ processes
def marked_pids(word: str) -> dict[int, str]:
    """Processes (not this one) whose command line holds ``word``: pid -> command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            if word in cmd:
                found[int(entry.name)] = cmd
    return found


def kill_marked(word: str) -> int:
    """End what the attacks left (the suite cleans up after a leak; the tests say it leaked)."""
    pids = marked_pids(word)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)


def lock_free(t: Targets) -> bool:
    path = t.assay_home / "eval.lock"
    if not path.exists():
        return True
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------------ one eval
def start(run: Run, t: Targets, env: dict[str, str]) -> subprocess.Popen[str]:
    argv = eval_argv(run, t, env)
    return subprocess.Popen(
        argv, env=env, cwd=t.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def finish(run: Run, proc: subprocess.Popen[str], t: Targets, started: float) -> Run:
    out, _ = proc.communicate(timeout=600)
    run.exit_code, run.output, run.elapsed_s = proc.returncode, out, time.monotonic() - started
    prefix = f"hostile-{t.session}-{run.bench}-{run.harness}-{run.mode}-"
    for pid, cmd in marked_pids(prefix).items():
        name = re.search(re.escape(prefix) + r"([a-z_]+)", cmd).group(1)  # type: ignore[union-attr]
        run.leftovers[name] = run.leftovers.get(name, 0) + 1
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    found = re.findall(r"run directory: (\S+)", out)
    results = t.results / f"{run.bench}-{run.harness}-{run.mode}"
    dirs = sorted(p.parent for p in results.rglob("results.jsonl")) if results.is_dir() else []
    run.run_dir = Path(found[-1]) if found else (dirs[-1] if dirs else None)
    read_journal(run)
    ran = [a for a in run.attempts.values() if a["status"] != "NOT_RUN"]
    if run.exit_code == 1 and not ran:  # the eval refused this setup (one line, exit 1)
        line = next((ln for ln in reversed(out.splitlines()) if "error:" in ln), "error: (no message)")
        run.refused = line.split("error:", 1)[1].strip().removeprefix("run stopped: configuration error: ")
    return run


def read_journal(run: Run) -> None:
    """The attempts by attack, and whether the journal, meta.json and scorecard are whole: every line an
    Attempt of a case of the suite, once each, and none forged; meta.json and the scorecard the run's own."""
    from assay.runs.records import Attempt

    problems: list[str] = []
    if run.run_dir is None or not (run.run_dir / "results.jsonl").is_file():
        run.journal = "no journal"
        return
    for line in (run.run_dir / "results.jsonl").read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            problems.append("a line that is no JSON")
            continue
        if isinstance(row, dict) and "forged_by" in row:
            problems.append("a line forged")
            continue
        try:
            Attempt.model_validate(row)
        except ValueError:
            problems.append("a line that is no attempt")
            continue
        run.attempts[attack_of(row["case_id"])] = row
    for name in ("meta.json", "scorecard.json"):
        path = run.run_dir / name
        text = path.read_text() if path.is_file() else ""
        if '"forged_by"' in text[:200] or not text:
            problems.append(f"{name} {'forged' if text else 'missing'}")
    wanted = {a.name for a in ATTACKS if in_run(a.name, run)}
    missing = wanted - set(run.attempts)
    if missing:
        problems.append("no attempt of " + ", ".join(sorted(missing)))
    run.missing = sorted(missing)
    run.journal = "; ".join(dict.fromkeys(problems)) or None


def in_run(attack: str, run: Run) -> bool:
    a = next(x for x in ATTACKS if x.name == attack)
    return run.bench in a.benchmarks and (run.harness == "command" or a.python)
