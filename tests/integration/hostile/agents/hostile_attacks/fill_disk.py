"""Fill the disk from the workdir, bounded by its own cap (``cap_mb``): a 4 MiB file at a time (no one file is
big: the cap on the workdir, not on a file's size, must stop it)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def run(params: dict, workdir: Path) -> str:
    cap, written, block = int(params["cap_mb"]) << 20, 0, os.urandom(1 << 20) * 4
    try:
        while written < cap:
            (workdir / f"fill-{written >> 22}.bin").write_bytes(block)
            written += len(block)
    except OSError as exc:
        time.sleep(2)  # keeps what it wrote
        return f"refused after {written >> 20} MiB: {exc}"
    time.sleep(2)  # holding it: a watch that polls has seen it
    return f"GOT {written >> 20} MiB written: no disk cap stopped it"
