"""Print without end, bounded by its own cap (``cap_mb``): 1 KiB lines to stdout."""

from __future__ import annotations

import sys
from pathlib import Path


def run(params: dict, workdir: Path) -> str:
    cap, line, written = int(params["cap_mb"]) << 20, "x" * 1023 + "\n", 0
    try:
        while written < cap:
            sys.stdout.write(line)
            written += len(line)
        sys.stdout.flush()
    except (BrokenPipeError, OSError) as exc:
        return f"cut after {written >> 20} MiB: {exc}"
    return f"GOT {written >> 20} MiB printed: no output cap stopped it"
