"""Unfenced agents cannot read the provider key of the eval process (or of any process it started).

A real ``assay agent run`` holds a planted key in its environment (where a provider key lives) and runs its
own model gateway in-process; the agent (command harness, python harness, the reference agent's shell) scans
every ``/proc/*/environ`` it can see and its own environment for the key. The control scans the same way from
outside the PID namespace and finds the key in a process that holds it, so the scan itself can succeed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from assay.agents._pidns import own_pids, pid_isolation

pytestmark = pytest.mark.skipif(pid_isolation() is not None, reason=f"{pid_isolation()}")

MARK = "sk-assay-planted-"
SCAN = f"""\
import json, os
found, seen = [], 0
for name in os.listdir("/proc"):
    if not name.isdigit():
        continue
    seen += 1
    try:
        with open(f"/proc/{{name}}/environ", "rb") as fh:
            if b"{MARK}" in fh.read():
                found.append(int(name))
    except OSError:
        pass
own = any("{MARK}" in v for v in os.environ.values())
print(json.dumps({{"scan": True, "processes": seen, "found_in": found, "own_env": own}}))
"""
PYAGENT = f"""\
import json, os


def scan(prompt: str) -> str:
    found, seen = [], 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        seen += 1
        try:
            with open(f"/proc/{{name}}/environ", "rb") as fh:
                if b"{MARK}" in fh.read():
                    found.append(int(name))
        except OSError:
            pass
    own = any("{MARK}" in v for v in os.environ.values())
    return json.dumps({{"scan": True, "processes": seen, "found_in": found, "own_env": own}})
"""


def _scan_result(stdout: str) -> dict[str, object]:
    line = next(line for line in stdout.splitlines() if '"scan": true' in line)
    return json.loads(line[line.index("{") : line.rindex("}") + 1])


@pytest.fixture
def planted(tmp_path: Path) -> dict[str, str]:
    """The environment of an eval process holding provider keys."""
    key = MARK + uuid.uuid4().hex
    # the assay under test (a checkout's src/ ahead of the installed one), as the test itself imports it
    here = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    return {
        **here,
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "COLUMNS": "400",
        "ANTHROPIC_API_KEY": key,
        "OPENAI_API_KEY": key + "-openai",
    }


def _assay(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "assay", "agent", "run", "scan the environment", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


def test_the_scan_finds_a_key_outside_the_namespace_and_none_inside(
    tmp_path: Path, planted: dict[str, str]
) -> None:
    (tmp_path / "scan.py").write_text(SCAN)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=planted)
    try:
        outside = subprocess.run([sys.executable, "scan.py"], cwd=tmp_path, capture_output=True, text=True)
        inside = subprocess.run(
            own_pids([sys.executable, "scan.py"]), cwd=tmp_path, capture_output=True, text=True
        )
    finally:
        holder.kill()
        holder.wait()
    assert holder.pid in _scan_result(outside.stdout)["found_in"]
    seen = _scan_result(inside.stdout)
    assert seen["found_in"] == [] and seen["processes"] <= 3, inside.stderr


@pytest.mark.slow
def test_command_and_reference_agents_cannot_read_the_eval_key(
    tmp_path: Path, planted: dict[str, str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "scan.py").write_text(SCAN)
    script = tmp_path / "model.yaml"
    script.write_text(
        "- tool_calls: [{name: run_shell, arguments: {command: python3 scan.py}}]\n- text: scanned\n"
    )
    model = ["--workdir", str(work), "--model", f"scripted/{script}"]
    command = _assay([*model, "--harness", "command:python3 scan.py"], planted, tmp_path)
    assert command.returncode == 0, command.stderr
    seen = _scan_result(command.stdout)
    assert seen == {"scan": True, "processes": seen["processes"], "found_in": [], "own_env": False}
    assert (
        0 < int(seen["processes"]) <= 3
    )  # its own tree only: the eval (and its gateway thread) is not in it

    saved = tmp_path / "record.json"
    reference = _assay([*model, "--save", str(saved)], planted, tmp_path)
    assert reference.returncode == 0, reference.stderr
    record = json.loads(saved.read_text())
    result = record["tool_record"][0]["result_summary"]
    assert '"found_in": []' in result and '"own_env": false' in result, result


@pytest.mark.slow
def test_python_agent_runs_apart_from_the_eval_environment(tmp_path: Path, planted: dict[str, str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "scanagent.py").write_text(PYAGENT)
    done = _assay(["--workdir", str(work), "--harness", "python:scanagent:scan"], planted, tmp_path)
    assert done.returncode == 0, done.stderr
    seen = _scan_result(done.stdout)
    assert seen["found_in"] == [] and seen["own_env"] is False and 0 < int(seen["processes"]) <= 3
