"""Allocate memory until killed, bounded by its own cap (``cap_mb``): 16 MiB at a time, every page touched."""

from __future__ import annotations

import time
from pathlib import Path


def run(params: dict, workdir: Path) -> str:
    cap, chunks = int(params["cap_mb"]), []
    try:
        while len(chunks) * 16 < cap:
            chunks.append(b"\x01" * (16 << 20))
    except MemoryError:
        time.sleep(2)  # keeps what it got, as a leaking agent would
        return f"refused after {len(chunks) * 16} MiB"
    time.sleep(2)  # holding it: a watch that polls has seen it
    return f"GOT {len(chunks) * 16} MiB: no memory cap stopped it"
