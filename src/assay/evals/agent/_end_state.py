"""End-state checks: what the workdir holds once the conversation is over, read after the agent is done.

- ``file_contains``: the file is there and holds the text, spacing aside (``port=5433`` holds
  ``port = 5433``; case and every other character count: ``a - b`` does not hold ``a + b``);
- ``file_unchanged``: a ``setup.files`` file is byte for byte what the setup wrote (not edited, not deleted);
- ``tests_pass``: ``python -m pytest -q`` (with the scenario's arguments) in the workdir exits 0. The tests
  run the agent's code: in a process group of their own, with the agent's environment (no provider key), the
  workdir as HOME, and a time limit.

Each is one :class:`~assay.evals.agent._record.CheckResult` over the whole scenario (``turn`` None).
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath

from assay.evals.agent._record import CheckResult
from assay.evals.agent._scenario import Scenario

__all__ = ["TESTS_TIMEOUT_S", "end_state_checks", "workdir_path_problem"]

#: how long the end-state test run may take
TESTS_TIMEOUT_S = 120.0
#: characters of pytest's output kept in a failed check's detail
_SHOWN = 300


def workdir_path_problem(path: str) -> str | None:
    """Why ``path`` is not a file path inside the workdir (absolute, ``..``, empty), or None."""
    pure = PurePosixPath(path)
    if not path.strip() or pure.is_absolute() or ".." in pure.parts or "\\" in path:
        return f"{path!r} must be a path inside the workdir (relative, no '..')"
    return None


def _unspaced(text: str) -> str:
    return "".join(text.split())


def _read(workdir: Path, rel: str) -> bytes | None:
    target = workdir / rel
    try:
        return target.read_bytes() if target.is_file() else None
    except OSError:
        return None


def _tests(workdir: Path, args: list[str]) -> CheckResult:
    from assay.agents import agent_env
    from assay.agents.reference import parse_pytest_summary
    from assay.evals._workspace import run_process

    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    shown = " ".join(["pytest", "-q", *args])
    env = agent_env(home=workdir, extra={"PYTHONPATH": str(workdir), "PYTHONDONTWRITEBYTECODE": "1"})
    code, output = run_process(argv, workdir, TESTS_TIMEOUT_S, env)
    _, line = parse_pytest_summary(output)
    if code is None:
        detail = f"`{shown}` ran past {TESTS_TIMEOUT_S:g}s"
    elif code == 0:
        detail = f"`{shown}` passed: {line or 'exit 0'}"
    else:
        tail = line or " ".join(output.split())[-_SHOWN:] or "no output"
        detail = f"`{shown}` exited {code}: {tail}"
    return CheckResult(name="tests_pass", passed=code == 0, detail=detail)


def end_state_checks(scenario: Scenario, workdir: Path) -> list[CheckResult]:
    """The scenario's ``end_state`` checks on ``workdir`` as the conversation left it."""
    want = scenario.end_state
    out: list[CheckResult] = []
    for fc in want.file_contains:
        raw = _read(workdir, fc.path)
        if raw is None:
            out.append(CheckResult(name="file_contains", passed=False, detail=f"{fc.path} does not exist"))
            continue
        ok = _unspaced(fc.text) in _unspaced(raw.decode("utf-8", errors="replace"))
        detail = f"{fc.path} {'holds' if ok else 'does not hold'} {fc.text!r}"
        out.append(CheckResult(name="file_contains", passed=ok, detail=detail))
    for rel in want.file_unchanged:
        raw = _read(workdir, rel)
        before = scenario.setup.files[rel].encode("utf-8")
        if raw is None:
            out.append(CheckResult(name="file_unchanged", passed=False, detail=f"{rel} was deleted"))
        else:
            ok = raw == before
            detail = f"{rel} {'is as the setup wrote it' if ok else 'was changed'}"
            out.append(CheckResult(name="file_unchanged", passed=ok, detail=detail))
    if want.tests_pass is not False:
        out.append(_tests(workdir, [] if want.tests_pass is True else list(want.tests_pass)))
    return out
