"""A fenced agent whose interpreter is reached through a version manager's shim (pyenv, asdf) runs: the shim is
resolved to the real program where the manager says which, and a shim folder's root is bound read-only."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from assay.agents import RunSpec, get_harness
from assay.agents._shims import resolve_program
from assay.agents.fence import fence_available

pytestmark = pytest.mark.skipif(fence_available() is not None, reason="bubblewrap cannot run here")


def _fake_manager(root: Path, *, with_which: bool) -> Path:
    """``root`` laid out like pyenv's: versions/3/bin/python3 (the real Python), shims/python3 (a shell script
    that runs it through the root), and, ``with_which``, libexec/pyenv answering ``pyenv which NAME``."""
    (root / "versions" / "3" / "bin").mkdir(parents=True)
    (root / "versions" / "3" / "bin" / "python3").symlink_to(os.path.realpath(sys.executable))
    (root / "shims").mkdir()
    shim = root / "shims" / "python3"
    shim.write_text(f'#!/bin/sh\nexec "{root}/versions/3/bin/${{0##*/}}" "$@"\n')
    shim.chmod(0o755)
    if with_which:
        (root / "libexec").mkdir()
        tool = root / "libexec" / "pyenv"
        tool.write_text(f'#!/bin/sh\n[ "$1" = which ] && echo "{root}/versions/3/bin/$2"\n')
        tool.chmod(0o755)
    return shim


AGENT = (
    "import subprocess\n"
    "out = subprocess.run(['python3', '-c', 'print(6 * 7)'], capture_output=True, text=True)\n"
    "print('inner', out.stdout.strip(), out.returncode)\n"
)


@pytest.mark.parametrize("with_which", [False, True], ids=["root-bound", "resolved"])
async def test_a_fenced_agent_behind_a_shim_runs_and_so_do_its_own_python_calls(
    tmp_path: Path, with_which: bool
) -> None:
    shim = _fake_manager(tmp_path / "fakeenv", with_which=with_which)  # outside the workdir
    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.py").write_text(AGENT)
    harness = get_harness("command", template=f"{shim} agent.py")
    result = await harness.run("x", RunSpec(workdir=work, fence=True, toolchain=[shim.parent]))
    assert result.error is None, result.error
    assert result.answer == "inner 42 0"
    assert result.containment is not None and result.containment.fenced


def test_a_shim_is_resolved_to_the_real_program_where_its_manager_says_which(tmp_path: Path) -> None:
    root = tmp_path / "fakeenv"
    shim = _fake_manager(root, with_which=True)
    program, binds = resolve_program(str(shim), path=str(shim.parent), cwd=tmp_path)
    assert program == str(root / "versions" / "3" / "bin" / "python3")
    assert root.resolve() / "versions" / "3" in binds and root.resolve() not in binds
    no_manager = _fake_manager(tmp_path / "other", with_which=False)
    program, binds = resolve_program(str(no_manager), path=None, cwd=tmp_path)
    assert program == str(no_manager) and (tmp_path / "other").resolve() in binds


async def test_a_fenced_command_template_runs_the_script_it_names_outside_the_workdir(tmp_path: Path) -> None:
    script = tmp_path / "agents" / "agent.py"  # named by its absolute path: bound read-only, alone
    script.parent.mkdir()
    script.write_text(
        "import os, sys\nprint('ran', os.path.exists(os.path.join(os.path.dirname(__file__), 'key')))\n"
    )
    (script.parent / "key").write_text("beside the script, not named\n")
    work = tmp_path / "work"
    work.mkdir()
    harness = get_harness("command", template=f"{os.path.realpath(sys.executable)} {script} {{prompt}}")
    result = await harness.run("x", RunSpec(workdir=work, fence=True))
    assert result.error is None, result.error
    assert result.answer == "ran False"
