"""benchmarks/agent_overhead.py runs as documented (a scripted 50 ms upstream) and prints every figure."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[3] / "benchmarks" / "agent_overhead.py"


def test_prints_gateway_harness_and_fence_overhead_per_call() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--scripted-ms", "50", "--runs", "1", "--calls", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    ms = r"\d+\.\d ms"
    for front in ("openai, JSON", "anthropic, SSE"):
        assert re.search(rf"{front}\s+{ms}\s+{ms}\s+{ms}\s+{ms}\s+\d+\.\d\d %", out), out
    for harness in ("reference", "claude-code"):
        assert re.search(rf"{harness}\s+harness\s+-?{ms} = \s*-?\d+\.\d\d % of a {ms} model call", out), out
    for row in ("start a command", "start, with the gateway relay", "one gateway call"):
        assert re.search(rf"{row}\s+{ms}\s+{ms}\s+\(\+-?\d+\.\d ms\)", out), out
    for way in ("unfenced, no limits", "limits", r"limits \+ fence \(default\)"):
        assert re.search(rf"  {way}\s+{ms}  \(\+-?\d+\.\d ms = -?\d+\.\d\d % of a {ms} model call\)", out), (
            out
        )
    assert "n/a" not in out and "not available" not in out
