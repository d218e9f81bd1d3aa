"""The README's tour, run top to bottom on a fresh copy of the repository, as a new user would.

The commands are read from README.md itself (every ```bash block of "## A short tour"), so the test follows
the README: each line must exit 0, and the output must hold no ``None`` and no traceback. They run in one
bash process (variables and ``export`` carry over), from a copy of the tracked files only (no results, no
caches), with a private ``ASSAY_HOME``. Two things differ from a terminal, said here: ``assay serve-local``
(which serves until Ctrl-C) runs in the background on a free port, is asked for ``/v1/models`` and then
stopped with SIGINT; and nothing is a TTY, so progress comes as plain lines.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SECTION = "## A short tour"
STEP_MARK = "::tour-step"


def tour_steps(readme: str) -> list[str]:
    """The command lines of the tour's bash blocks (comments and blank lines dropped)."""
    start = readme.index(SECTION)
    end = readme.find("\n## ", start + len(SECTION))
    section = readme[start : end if end >= 0 else None]
    steps: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                steps.append(line)
    return steps


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_in_background(step: str) -> str:
    """``assay serve-local --port P  # ...`` as: start it, wait until it answers, stop it with Ctrl-C."""
    port = _free_port()
    command = re.sub(r"--port \d+", f"--port {port}", step.split("  #")[0].strip())
    probe = (
        "import sys, time, urllib.request\n"
        "for _ in range(240):\n"
        "    try:\n"
        f"        urllib.request.urlopen('http://127.0.0.1:{port}/v1/models', timeout=2); sys.exit(0)\n"
        "    except OSError:\n"
        "        time.sleep(0.5)\n"
        "sys.exit(1)\n"
    )
    return (
        f"{command} & SERVER=$!; {shlex.quote(sys.executable)} -c {shlex.quote(probe)}; UP=$?; "
        'kill -INT "$SERVER"; wait "$SERVER"; RC=$?; [ "$UP" -eq 0 ] && [ "$RC" -eq 0 ]'
    )


def tour_script(steps: list[str]) -> str:
    lines = ['cd "$TOUR_ROOT"']
    for i, step in enumerate(steps):
        command = _serve_in_background(step) if step.startswith("assay serve-local") else step
        lines.append(f"echo '{STEP_MARK} {i} start'")
        lines.append(command)
        lines.append(f'echo "{STEP_MARK} {i} rc=$?"')
    return "\n".join(lines) + "\n"


def _fresh_copy(dest: Path) -> None:
    """The tracked files of the working tree (what a clone holds, with uncommitted edits under test)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(
        b"\0"
    )
    for name in filter(None, files):
        src = REPO / os.fsdecode(name)
        if src.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(src.read_bytes())


def test_tour_steps_are_read_from_the_readme():
    steps = tour_steps((REPO / "README.md").read_text(encoding="utf-8"))
    assert steps[0].startswith("assay eval memory --iterations 5 --save-baseline")
    assert any(s.startswith("assay serve-local") for s in steps)
    assert all("RUN_A" not in s and "STRONG" not in s for s in steps), "placeholders a new user cannot run"


@pytest.mark.slow
@pytest.mark.local_model
def test_the_readme_tour_runs_top_to_bottom(tmp_path):
    root = tmp_path / "assay"
    _fresh_copy(root)
    steps = tour_steps((root / "README.md").read_text(encoding="utf-8"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(
        TOUR_ROOT=str(root),
        ASSAY_HOME=str(tmp_path / "home"),
        PYTHONPATH=str(root / "src"),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    res = subprocess.run(
        ["bash", "-c", tour_script(steps)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    out = res.stdout + res.stderr
    codes = {int(i): int(rc) for i, rc in re.findall(rf"{STEP_MARK} (\d+) rc=(\d+)", res.stdout)}
    failed = [f"{steps[i]!r} exited {rc}" for i, rc in codes.items() if rc != 0]
    assert len(codes) == len(steps), f"the tour stopped early:\n{out[-4000:]}"
    assert not failed, "\n".join(failed) + "\n" + out[-6000:]
    assert "Traceback" not in out, out
    nones = [ln for ln in out.splitlines() if re.search(r"\bNone\b", ln)]
    assert not nones, "output prints None:\n" + "\n".join(nones[:20])
