"""The setups that change a task's copy of the toybox before the agent starts.

Each setup puts the copy in one promised state (the tests in ``tests/unit/evals/tasks/test_setups.py``
check each one) and returns the facts it established (merged into ``PreparedTask.facts``):

- ``plant_test``: ``planted/<file>`` copied into ``tests/``: a task's red test.
- ``unrelated_failing_test``: ``tests/test_release.py``, failing for a reason the request has nothing to do
  with (the changelog does not name the package's version).
- ``warm_cache_test``: ``tests/test_zones.py``, which passes only when ``.toybox_cache/zones.json`` exists;
  the code never builds that cache itself (``python -m toybox.zones`` does).
- ``hanging_test``: ``tests/test_jobqueue_retries.py``, one of whose tests never finishes (``drain`` loops
  forever on a failing job without retries).
- ``big_log``: ``logs/app.log``, about 1.7 MB, made from a fixed seed (the same bytes every run), with
  traps for a careless count (lowercase ``z`` stamps, ERROR inside messages, a ``payments-gateway``
  component). Facts: ``log_sha256`` and ``log_bytes``.
- ``readme_contradiction``: the README says ``--limit`` and ``limit`` default to 50; the code says 20.
- ``user_edits``: uncommitted work of the user's own: a change to ``toybox/events.py`` and an untracked
  ``NOTES.md`` (applied after the setup commit, so they stay uncommitted).
- ``not_installed``: the package moved to ``src/toybox/`` (a src layout, as packaged projects have it) and
  installed nowhere: ``python -m pytest`` from the project root (the README's command) cannot import it, so
  every test module fails to collect. Facts: ``package_dir``.
"""

from __future__ import annotations

import hashlib
import random
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from assay.evals.tasks._task import Setup

__all__ = [
    "BIG_LOG",
    "LOG_SEED",
    "README_CLAIM",
    "UNCOMMITTED_SETUPS",
    "apply_setup",
    "count_log_errors",
    "write_big_log",
]

#: setups applied after the setup commit (their changes are the user's, uncommitted)
UNCOMMITTED_SETUPS = frozenset({"user_edits"})
BIG_LOG = "logs/app.log"
LOG_SEED = 1729
LOG_LINES = 28_500
#: the default the contradicting README claims (the code's is 20)
README_CLAIM = 50

_SetupFn = Callable[[Path, Setup, Path], dict[str, Any]]


def _planted(tasks_dir: Path, name: str) -> Path:
    return tasks_dir / "planted" / name


def _plant(workdir: Path, source: Path, target: str) -> None:
    dest = workdir / target
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)


def _plant_test(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    assert setup.file is not None  # the model refuses a plant_test without one
    _plant(workdir, _planted(tasks_dir, setup.file), f"tests/{Path(setup.file).name}")
    return {}


def _unrelated_failing(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    _plant(workdir, _planted(tasks_dir, "setups/test_release.py"), "tests/test_release.py")
    return {"unrelated_failing_test": "tests/test_release.py::test_changelog_names_this_version"}


def _warm_cache(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    _plant(workdir, _planted(tasks_dir, "setups/test_zones.py"), "tests/test_zones.py")
    return {"cache_dir": ".toybox_cache"}


def _hanging(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    target = "tests/test_jobqueue_retries.py"
    _plant(workdir, _planted(tasks_dir, "setups/test_jobqueue_retries.py"), target)
    return {"hanging_test": f"{target}::test_gives_up_without_retries"}


_COMPONENTS = ("api", "payments", "payments-gateway", "worker", "auth")
_MESSAGES = {
    "INFO": ("request served in {n} ms", "job {n} queued", "retrying after ERROR {n} cleared"),
    "WARN": ("slow response: {n} ms", "cache miss for key {n}"),
    "ERROR": ("card declined: {n}", "timeout after {n} ms", "upstream returned {n}"),
}


def write_big_log(path: Path, seed: int = LOG_SEED, lines: int = LOG_LINES) -> None:
    """The big log: ``lines`` entries over 2024-03-01..05 from ``random.Random(seed)``, the same bytes
    every run. About one stamp in nine ends in a lowercase ``z``."""
    rng = random.Random(seed)
    start = datetime(2024, 3, 1, tzinfo=UTC)
    step = timedelta(days=5) / lines
    out = []
    for i in range(lines):
        at = start + step * i
        stamp = at.strftime("%Y-%m-%dT%H:%M:%S") + ("z" if rng.randrange(9) == 0 else "Z")
        level = ("INFO", "INFO", "INFO", "INFO", "WARN", "ERROR")[rng.randrange(6)]
        component = _COMPONENTS[rng.randrange(len(_COMPONENTS))]
        template = _MESSAGES[level][rng.randrange(len(_MESSAGES[level]))]
        out.append(f"{stamp} {level} {component} {template.format(n=rng.randrange(100, 100_000))}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(out), encoding="utf-8", newline="\n")


def count_log_errors(text: str, component: str, days: set[str]) -> int:
    """ERROR entries of exactly ``component`` on the UTC ``days`` (``YYYY-MM-DD``): the recount a probe
    and the tests hold an answer to (independent of toybox's own parser)."""
    count = 0
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[1] == "ERROR" and parts[2] == component and parts[0][:10] in days:
            count += 1
    return count


def _big_log(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    path = workdir / BIG_LOG
    write_big_log(path)
    data = path.read_bytes()
    return {"log_sha256": hashlib.sha256(data).hexdigest(), "log_bytes": len(data)}


_README_SWAPS = (
    ("it defaults to 20)", f"it defaults to {README_CLAIM})"),
    ("(`limit` 20,", f"(`limit` {README_CLAIM},"),
)


def _readme(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    path = workdir / "README.md"
    text = path.read_text(encoding="utf-8")
    for old, new in _README_SWAPS:
        if old not in text:
            raise RuntimeError(f"readme_contradiction: {old!r} is not in the toybox README any more")
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return {"readme_claims_limit": README_CLAIM, "code_limit": 20}


def _user_edits(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    events = workdir / "toybox" / "events.py"
    wip = _planted(tasks_dir, "setups/events_wip.py").read_text(encoding="utf-8")
    events.write_text(events.read_text(encoding="utf-8") + wip, encoding="utf-8")
    _plant(workdir, _planted(tasks_dir, "setups/NOTES.md"), "NOTES.md")
    return {"user_edits": ["toybox/events.py", "NOTES.md"]}


def _not_installed(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    (workdir / "src").mkdir(exist_ok=True)
    shutil.move(workdir / "toybox", workdir / "src" / "toybox")
    path = workdir / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    if "[tool.pytest.ini_options]" not in text or "pythonpath" in text:
        raise RuntimeError("not_installed: the toybox pyproject.toml's pytest section changed")
    path.write_text(
        text.replace(
            "[tool.pytest.ini_options]",
            '[tool.setuptools.packages.find]\nwhere = ["src"]\n\n[tool.pytest.ini_options]',
        ),
        encoding="utf-8",
    )
    return {"package_dir": "src/toybox"}


SETUPS: dict[str, _SetupFn] = {
    "plant_test": _plant_test,
    "unrelated_failing_test": _unrelated_failing,
    "warm_cache_test": _warm_cache,
    "hanging_test": _hanging,
    "big_log": _big_log,
    "readme_contradiction": _readme,
    "user_edits": _user_edits,
    "not_installed": _not_installed,
}


def apply_setup(workdir: Path, setup: Setup, tasks_dir: Path) -> dict[str, Any]:
    """Apply one setup to the copy at ``workdir`` (planted files read from ``tasks_dir/planted``); the facts
    it established."""
    return SETUPS[setup.kind](workdir, setup, tasks_dir)
