"""Leave a daemon running after the agent exits (``hold`` seconds at most): detached from the agent's session,
it writes beside the eval and takes the machine's eval lock when the eval lets go of it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

from hostile_attacks._common import detach, spawn


def _haunt(params: dict) -> None:
    end = time.monotonic() + float(params["hold"])
    lock = None
    while time.monotonic() < end:
        for folder in params["paths"]:
            with contextlib.suppress(OSError):
                (Path(folder) / f"daemon-{params['marker']}").write_text("alive\n")
        if lock is None and params.get("lock"):
            try:
                fd = os.open(params["lock"], os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    lock = fd
                except OSError:
                    os.close(fd)
            except OSError:
                pass
        time.sleep(0.2)


def run(params: dict, workdir: Path) -> str:
    if params.get("role") != "daemon":
        return spawn(params, "daemon")
    if os.fork() == 0:
        detach()
        if os.fork() == 0:
            _haunt(params)
        os._exit(0)
    return "started a daemon"
