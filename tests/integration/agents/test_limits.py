"""Every agent process is held to its limits (memory, processes, disk in the workdir, output kept, wall clock) and
its whole tree ends with its attempt, fenced or not: an agent over a limit is stopped with the reason, an honest
one under the limits runs unchanged, and what it left running is killed and named in the record."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from assay.agents import Limits, RunSpec, get_harness
from assay.agents.fence import fence_available

PY = os.path.realpath(sys.executable)
FENCES = [
    False,
    pytest.param(True, marks=pytest.mark.skipif(fence_available() is not None, reason="no bwrap")),
]
SMALL = Limits(wall_clock_s=20, memory_mb=200, max_procs=20, disk_mb=10, output_kb=16)


async def _run(code: str, tmp_path: Path, *, fence: bool = False, limits: Limits = SMALL):
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "agent.py").write_text(code)
    harness = get_harness("command", template=f"{shlex.quote(PY)} agent.py {{prompt}}")
    started = time.monotonic()
    result = await harness.run("go", RunSpec(workdir=work, limits=limits, fence=fence))
    return result, time.monotonic() - started


def _alive(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("fence", FENCES)
async def test_an_honest_agent_under_the_limits_runs_unchanged(tmp_path: Path, fence: bool) -> None:
    code = "import sys, subprocess\nsubprocess.run(['true'])\nopen('out.txt', 'w').write('x' * 1000)\nprint('done', sys.argv[1])\n"
    result, _ = await _run(code, tmp_path, fence=fence)
    assert result.error is None and result.cut_off is None, result.error
    assert result.answer == "done go" and result.exit_code == 0
    c = result.containment
    assert c is not None and c.fenced is fence
    assert c.stopped_by is None and c.killed == [] and c.output_dropped_bytes == 0
    assert c.limits["memory_mb"] == 200 and c.limits["max_procs"] == 20 and c.limits["disk_mb"] == 10


async def test_an_agent_over_the_memory_limit_is_stopped_with_the_reason(tmp_path: Path) -> None:
    code = "import time\nhog = []\nfor _ in range(40):\n    hog.append(bytearray(20 * 2**20))\n    time.sleep(0.05)\n"
    result, _ = await _run(code, tmp_path)
    assert result.cut_off == "memory", (result.error, result.containment)
    assert result.error is not None and "over the memory limit" in result.error and "200 MB" in result.error
    # one allocation past the backstop (twice the limit) fails before a look: the same limit, said so
    result, _ = await _run("b = bytearray(500 * 2**20)\n", tmp_path / "one")
    assert result.cut_off == "memory" and "memory backstop (400 MB" in (result.error or ""), result.error


@pytest.mark.parametrize("fence", FENCES)
async def test_an_agent_over_the_process_limit_is_stopped_and_its_tree_killed(
    tmp_path: Path, fence: bool
) -> None:
    marker = f"{time.time_ns() % 10**6}.5"
    code = (
        "import subprocess, time\nkids = []\nfor _ in range(40):\n"
        f"    kids.append(subprocess.Popen(['sleep', '{marker}']))\n    time.sleep(0.02)\ntime.sleep(30)\n"
    )
    result, elapsed = await _run(code, tmp_path, fence=fence)
    assert result.cut_off == "processes", (result.error, result.containment)
    assert "over the processes limit" in (result.error or "") and "limit of 20" in (result.error or "")
    assert result.containment is not None and result.containment.killed.count("sleep") >= 15
    assert elapsed < 15 and _alive(marker) == []


async def test_an_agent_filling_the_workdir_is_stopped_over_the_disk_limit(tmp_path: Path) -> None:
    code = "import time\nfor i in range(60):\n    open(f'f{i}.bin', 'wb').write(b'x' * 2**20)\n    time.sleep(0.03)\n"
    result, _ = await _run(code, tmp_path)
    assert result.cut_off == "disk", (result.error, result.containment)
    assert "written in the workdir, over the limit of 10 MB" in (result.error or "")
    # one file written faster than a look: the file size backstop (SIGXFSZ, or EFBIG where it is ignored)
    for writer in (
        "open('big.bin', 'wb').write(b'x' * 30 * 2**20)",
        "dd if=/dev/zero of=big.bin bs=1M count=30",
    ):
        code = writer + "\n" if writer.startswith("open") else f"import os\nos.system({writer!r})\n"
        result, _ = await _run(code, tmp_path / writer[:2])
        assert result.cut_off == "disk", (result.error, result.containment)
        assert "limit of 10 MB" in (result.error or "")


async def test_output_past_the_cap_is_counted_not_kept(tmp_path: Path) -> None:
    code = "for i in range(4000):\n    print('line', i, 'x' * 60)\n"
    result, _ = await _run(code, tmp_path)
    assert result.error is None and result.cut_off is None
    c = result.containment
    assert c is not None and c.output_bytes > 250_000 and c.output_dropped_bytes > 200_000
    assert len(result.answer) <= 16 * 1024 + 100


@pytest.mark.parametrize("fence", FENCES)
async def test_a_daemon_left_running_is_killed_and_named(tmp_path: Path, fence: bool) -> None:
    marker = f"{time.time_ns() % 10**6}.25"
    code = (
        "import os, subprocess, time\nif os.fork() == 0:\n    os.setsid()\n"
        f"    subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
        "    open('started', 'w').close()\n    os._exit(0)\n"
        "while not os.path.exists('started'):\n    time.sleep(0.01)\nprint('bye')\n"
    )
    result, elapsed = await _run(code, tmp_path, fence=fence)
    assert result.error is None and result.answer == "bye"
    assert result.containment is not None and "sleep" in result.containment.killed
    assert _alive(marker) == [] and elapsed < 10


async def test_an_agent_ignoring_sigterm_gets_sigkill_after_the_grace(tmp_path: Path) -> None:
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('hi', flush=True)\ntime.sleep(60)\n"
    limits = SMALL.model_copy(update={"wall_clock_s": 1.0})
    result, elapsed = await _run(code, tmp_path, limits=limits)
    assert result.cut_off == "wall_clock" and result.answer == "hi"
    c = result.containment
    assert c is not None and c.stopped_by == "wall_clock" and "wall clock of 1 s" in (c.reason or "")
    assert c.killed_hard and c.killed_hard == c.killed
    assert elapsed < 1.0 + 3.0 + 4.0
