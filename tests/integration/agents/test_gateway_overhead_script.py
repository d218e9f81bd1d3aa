"""benchmarks/gateway_overhead.py runs as documented (a scripted 20 ms upstream) and prints each client's figures:
in the gateway's process on the model client's own path, in another process, and over the socket."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[3] / "benchmarks" / "gateway_overhead.py"


def test_prints_the_overhead_of_each_client_against_its_floor() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--calls", "3", "--delay-ms", "20"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"load average \d+\.\d\d before, \d+\.\d\d after", out), out
    blocks = out.split("  client in ")[1:]
    assert [b.split(" (")[0] for b in blocks] == [
        "this process",
        "another process",
        "this process over the socket",
    ]
    ms, share = r"-?\d+\.\d\d ms", r"-?\d+\.\d\d%"
    for block, cpu in zip(blocks, (True, False, True), strict=True):
        for front in ("openai, JSON", "anthropic, SSE"):
            row = rf"{front}\s+{ms}\s+{share}\s+{ms}\s+-?\d+\.\dx" + (rf"\s+{ms}" if cpu else r"\n")
            assert re.search(row, block), block
    assert re.search(r"goal <= 2%: in this process (met|NOT met), from another process (met|NOT met)", out)
