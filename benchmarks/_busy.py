"""Busy loops for the speed scripts' ``--load N``: N other processes spinning while a figure is measured, so it
can be seen on a busy machine (the load average is printed beside every figure either way)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def busy_loops(n: int) -> Iterator[None]:
    """``n`` processes each spinning on a core until the block ends (a second to get going first)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(1.0 if procs else 0)
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def load_average() -> float:
    """The one-minute load average."""
    return os.getloadavg()[0]
