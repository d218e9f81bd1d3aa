"""Fork-bomb, bounded by its own cap: fork until refused or ``cap`` processes, each a ``sleep`` of ``hold``
seconds away from the agent's pipes; then exit, leaving them."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hostile_attacks._common import detach, spawn


def run(params: dict, workdir: Path) -> str:
    if params.get("role") != "bomb":
        return spawn(params, "bomb", timeout=60)
    cap, made, why = int(params["cap"]), 0, ""
    for _ in range(cap):
        try:
            pid = os.fork()
        except OSError as exc:
            why = str(exc)
            time.sleep(2)  # keeps what it forked
            break
        if pid == 0:  # a sleep named by the marker (small: the cap on processes, not memory, should stop it)
            detach()
            try:
                os.execv("/bin/sleep", [params["marker"], str(params["hold"])])
            finally:
                os._exit(0)
        made += 1
    if made == cap:
        time.sleep(2)  # still here: a watch that polls has seen them all
        return f"GOT {made} processes: no cap on processes stopped it"
    return f"forked {made} of {cap}, then refused: {why}"
