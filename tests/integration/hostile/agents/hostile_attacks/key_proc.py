"""Read a provider key from other processes: every /proc/<pid>/environ and command line it can open (the eval
and its model gateway among them)."""

from __future__ import annotations

import os
from pathlib import Path

from hostile_attacks._common import report_keys


def run(params: dict, workdir: Path) -> str:
    lines, opened, pids = [], 0, [p for p in os.listdir("/proc") if p.isdigit()]
    for pid in pids:
        for name in ("environ", "cmdline"):
            try:
                data = Path(f"/proc/{pid}/{name}").read_bytes().replace(b"\0", b"\n")
            except OSError:
                continue
            opened += 1
            lines += report_keys(f"/proc/{pid}/{name}", data.decode("utf-8", "replace"), params["prefix"])
    return "\n".join([f"saw {len(pids)} processes, opened {opened} files", *sorted(set(lines))])
