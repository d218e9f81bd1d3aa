"""Fork-bomb, bounded by its own cap: fork until refused or ``cap`` processes, each a ``sleep`` of ``hold``
seconds away from the agent's pipes; then exit, leaving them."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hostile_attacks._common import spawn


def run(params: dict, workdir: Path) -> str:
    if params.get("role") != "bomb":
        return spawn(params, "bomb", timeout=60)
    cap, made, why = int(params["cap"]), 0, ""
    # each a sleep named by the marker, spawned without a copy of this interpreter in between (a forked copy
    # holds ~10 MB resident until it execs: on a loaded machine a hundred of them tripped the memory cap
    # before the process cap, and the verdict's reason depended on the scheduler); in its own session, on
    # /dev/null, as detach() leaves a daemon
    away = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    for _ in range(cap):
        try:
            os.posix_spawn(
                "/bin/sleep",
                [params["marker"], str(params["hold"])],
                os.environ,
                file_actions=away,
                setsid=True,
            )
        except OSError as exc:
            why = str(exc)
            time.sleep(2)  # keeps what it spawned
            break
        made += 1
    if made == cap:
        time.sleep(2)  # still here: a watch that polls has seen them all
        return f"GOT {made} processes: no cap on processes stopped it"
    return f"forked {made} of {cap}, then refused: {why}"
