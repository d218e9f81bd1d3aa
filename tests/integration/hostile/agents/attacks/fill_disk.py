"""Fill the disk from the workdir, bounded by its own cap (``cap_mb``): 4 MiB at a time."""

from __future__ import annotations

import os
from pathlib import Path


def run(params: dict, workdir: Path) -> str:
    cap, written, block = int(params["cap_mb"]) << 20, 0, os.urandom(1 << 20) * 4
    try:
        with (workdir / "fill.bin").open("wb") as f:
            while written < cap:
                f.write(block)
                written += len(block)
                f.flush()
    except OSError as exc:
        return f"refused after {written >> 20} MiB: {exc}"
    return f"GOT {written >> 20} MiB written: no disk cap stopped it"
