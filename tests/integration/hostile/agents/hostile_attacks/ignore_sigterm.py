"""Ignore SIGTERM and outlive the wall clock (``hold`` seconds at most)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from hostile_attacks._common import spawn


def run(params: dict, workdir: Path) -> str:
    if params.get("role") != "stubborn":
        return spawn(params, "stubborn")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(float(params["hold"]))
    return f"GOT {params['hold']} s: SIGTERM ignored and never killed"
