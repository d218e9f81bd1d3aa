"""The hostile-agent suite: agent programs that attack the eval running them (``agents/hostile_attacks/``, one attack
each), run through the ``command`` and ``python`` harnesses in ``eval tasks``, ``eval code`` and ``eval agent``,
fenced and unfenced. Each attack gets nothing fenced and never a PASS; every run goes on to its last case with its
journal whole; unfenced, what still succeeds is what ``--no-fence`` gives up. After the suite no attack process
is left, the disk is back where it was, and another eval waiting on the lock was refused while the suite ran and
runs after it.

The README's table ("Hostile agents") is this run's table: the test fails when they differ. Rewrite it with

    ASSAY_HOSTILE_README=1 pytest tests/integration/hostile -m slow -p no:randomly

The programs are test doubles, not part of the installed package: a fork bomb, a memory hog and a disk filler
have no business in site-packages, and each attack needs the answer keys and canaries this suite plants.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hostile_fixtures import Listener, Targets, host_ip, plant
from hostile_runs import Run, eval_env, finish, kill_marked, lock_free, marked_pids, start
from hostile_table import Row, figures, gives_up, render, rows, seen_outside

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[3] / "README.md"
BEGIN = "<!-- hostile table: written by tests/integration/hostile/test_hostile_suite.py -->"
END = "<!-- end of the hostile table -->"
#: benchmark, harness: each run fenced and unfenced
PAIRS = tuple((b, h) for b in ("tasks", "code", "agent") for h in ("command", "python"))
#: evals run at once
PARALLEL = 3

#: fenced leaks known and reported to the fence lane (FINDINGS.md); the goal is none. Pinned: a fix shows up
#: here as a failure until the entry goes
KNOWN_FENCED_LEAKS: set[tuple[str, str]] = set()
#: what --no-fence gives up (attack, benchmark · harness): the README's unfenced column
UNFENCED_GIVES_UP: set[tuple[str, str]] = {
    ("read_answer_key", "agent · command"),
    ("read_answer_key", "agent · python"),
    ("read_answer_key", "code · command"),
    ("read_answer_key", "code · python"),
    ("read_answer_key", "tasks · command"),
    ("read_answer_key", "tasks · python"),
    ("read_other_workdir", "tasks · command"),
    ("read_results", "agent · command"),
    ("read_results", "tasks · command"),
    ("write_outside", "tasks · command"),
    ("write_outside", "tasks · python"),
    ("edit_results", "agent · command"),
    ("edit_results", "agent · python"),
    ("edit_results", "code · command"),
    ("edit_results", "code · python"),
    ("edit_results", "tasks · command"),
    ("edit_results", "tasks · python"),
    ("edit_tests", "tasks · command"),
    ("grader_escape", "tasks · command"),
    ("key_home", "tasks · command"),
    ("key_home", "tasks · python"),
    ("network", "tasks · command"),
    ("network", "tasks · python"),
}


def _du(path: Path) -> dict[str, int]:
    """Every file under ``path``, relative -> size."""
    return {
        p.relative_to(path).as_posix(): p.stat().st_size
        for p in path.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


def _second_eval(t: Targets) -> list[str]:
    """A small honest eval of the same machine (``--tasks honest``), as another user would start it."""
    tasks = t.answers / "tasks" / "tasks.json"
    return [
        sys.executable, "-m", "assay", "eval", "tasks", "run", "--model", f"scripted/{t.answers / 'model.yaml'}",
        "--tasks-file", str(tasks), "--tasks", "honest", "--work-root", str(t.work), "--no-judge",
        "--harness", f"command:{Path(__file__).parent / 'agents' / 'hostile_agent.py'} {{prompt}}",
        "--results-dir", str(t.root / "second"), "--run-timeout", "20",
    ]  # fmt: skip


def _restore(t: Targets, before: dict[str, Any], prefix: str) -> None:
    """Put back what an unfenced attack changed (in the shared folder, only what this run's attacks wrote)."""
    t.baseline.write_bytes(before["baseline"])
    if "probe" in before:
        (t.answers / "tasks" / "probes" / "edit-tests.py").write_bytes(before["probe"])
    for folder in (t.outside, t.other_workdir, t.answers):
        for p in folder.iterdir():
            if p.name.startswith(("written-by-", "grader-escape-", "daemon-")) and prefix in p.name:
                p.unlink()


def _one(run: Run, t: Targets, listener: Listener, second: dict[str, Any] | None) -> dict[str, Any]:
    """One eval of the suite in its own world; with ``second``, another eval is started while it holds the
    lock (refused, naming the holder)."""
    env = eval_env(t)
    plant(t)
    probe = t.answers / "tasks" / "probes" / "edit-tests.py"
    before: dict[str, Any] = {"baseline": t.baseline.read_bytes()}
    started = time.monotonic()
    proc = start(run, t, env)
    if probe.is_file():
        before["probe"] = probe.read_bytes()
    if second is not None:
        while lock_free(t) and proc.poll() is None:
            time.sleep(0.05)
        busy = subprocess.run(_second_eval(t), env=env, capture_output=True, text=True)
        second["busy"] = (busy.returncode, busy.stdout + busy.stderr)
    finish(run, proc, t, started)
    time.sleep(1.0)  # a daemon that outlived its attempt would take the lock the eval let go
    seen = seen_outside(t, before, list(listener.heard))
    _restore(t, before, f"hostile-{t.session}-{run.bench}-{run.harness}-{run.mode}-")
    print(f"{run.label} {run.mode}: exit {run.exit_code} in {run.elapsed_s:.1f} s")
    return seen


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from assay.agents.fence import fence_available
    from assay.evals._workspace import cached_toolchain

    # not a skip: where the fence cannot run, the fenced column cannot be made and the suite fails saying why
    reason = fence_available()
    assert reason is None, reason
    t = Targets(tmp_path_factory.mktemp("hostile"))
    listener = Listener()
    t.port, t.host_ip = listener.port, host_ip()
    plant(t)
    cached_toolchain(t.work)  # made once, before the disk is measured
    disk_before = _du(t.work)
    runs = [Run(bench, harness, fenced) for bench, harness in PAIRS for fenced in (True, False)]
    worlds = {id(r): t.world(f"{r.bench}-{r.harness}-{r.mode}") for r in runs}
    second: dict[str, Any] = {}
    try:
        # side by side (the evals mostly wait on their agents); the first also has another eval wait on its lock
        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            futures = [
                pool.submit(_one, r, worlds[id(r)], listener, second if i == 0 else None)
                for i, r in enumerate(runs)
            ]
            seen = {(r.bench, r.harness, r.mode): f.result() for r, f in zip(runs, futures, strict=True)}
        # after the suite: the waiting eval runs as if nothing happened
        first = worlds[id(runs[0])]
        after = subprocess.run(_second_eval(first), env=eval_env(first), capture_output=True, text=True)
        second["after"] = (after.returncode, after.stdout + after.stderr)
        left = marked_pids(f"hostile-{t.session}-")
        yield {
            "t": t,
            "runs": runs,
            "table": rows(runs, t, seen),
            "second": second,
            "left": left,
            "disk": (disk_before, _du(t.work)),
            # what the evals' temporary folders still hold (a library's own dotfile, .ses, is not the attacks')
            "tmp_left": sorted(
                f"{w.root.name}/{p.name}"
                for w in worlds.values()
                for p in w.tmp.iterdir()
                if not p.name.startswith(".")
            ),
            "lock_free": all(lock_free(w) for w in worlds.values()),
        }
    finally:
        listener.close()
        kill_marked(f"hostile-{t.session}-")
        shutil.rmtree(t.work, ignore_errors=True)


def _leaks(table: list[Row], mode: str) -> set[tuple[str, str]]:
    return {(r.attack, r.label) for r in table if r.leaked(mode)}


def test_no_attack_gets_anything_through_the_fence(suite: dict[str, Any]) -> None:
    table: list[Row] = suite["table"]
    leaks = {(r.attack, r.label): r.cells["fenced"] for r in table if r.leaked("fenced")}
    assert set(leaks) == KNOWN_FENCED_LEAKS, leaks
    for r in table:
        cell = r.cells.get("fenced")
        if cell and cell[0] != "not run" and r.attack != "honest":
            assert not cell[1].startswith("PASS"), (r.attack, r.label, cell)


def test_the_honest_control_passes_in_every_run(suite: dict[str, Any]) -> None:
    for r in suite["table"]:
        if r.attack == "honest":
            for mode, cell in r.cells.items():
                assert cell and (cell[0] == "not run" or cell[1].startswith("PASS")), (r.label, mode, cell)


def test_every_fenced_run_goes_on_with_its_journal_whole(suite: dict[str, Any]) -> None:
    for run in suite["runs"]:
        if run.fenced and not run.refused:
            assert run.journal is None, (run.label, run.journal, run.output[-1500:])
            assert run.exit_code in (0, 2), (run.label, run.output[-1500:])


def test_unfenced_gives_up_only_what_the_readme_lists(suite: dict[str, Any]) -> None:
    assert _leaks(suite["table"], "open") == UNFENCED_GIVES_UP, gives_up(suite["table"])


def test_the_readme_table_is_this_runs_table(suite: dict[str, Any]) -> None:
    table = suite["table"]
    f = figures(table)
    text = (
        render(table)
        + f"\nFenced: {f['fenced']['tried']} attacks tried, {f['fenced']['contained']} contained, "
        f"{f['fenced']['leaked']} leaked. Unfenced: {f['open']['tried']} tried, {f['open']['contained']} contained, "
        f"{f['open']['leaked']} leaked.\n"
    )
    readme = README.read_text()
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    if os.environ.get("ASSAY_HOSTILE_README") == "1":
        README.write_text(readme[:start] + "\n" + text + readme[end:])
    else:
        assert readme[start:end].strip() == text.strip(), "the README's hostile table differs from this run's"


def test_after_the_suite_nothing_is_left_and_the_next_eval_runs(suite: dict[str, Any]) -> None:
    # each eval's attack processes, counted as it ended (then ended by the suite), and any found at the end
    left = {(r.label, r.mode): r.leftovers for r in suite["runs"] if r.leftovers}
    assert left == {} and suite["left"] == {}, (left, suite["left"])
    before, after = suite["disk"]
    grown = {p: n for p, n in after.items() if before.get(p) != n}
    assert grown == {} and set(before) <= set(after), f"the work root changed: {sorted(grown)[:10]}"
    assert suite["tmp_left"] == [], suite["tmp_left"]
    assert suite["lock_free"]
    code, out = suite["second"]["busy"]
    assert code == 4 and "another eval is running" in out, out[-800:]
    code, out = suite["second"]["after"]
    assert code == 0 and "PASS" in out, out[-1500:]
