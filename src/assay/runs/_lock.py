"""One eval at a time per machine: an ``flock`` on ``$ASSAY_HOME/eval.lock`` naming its holder.

The kernel drops an ``flock`` when its process dies, so a dead holder's lock is reclaimed by the next eval
without any stale-lock heuristics. ``ASSAY_NO_LOCK=1`` opts out. Reading, gating and reporting never lock.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from assay._util import assay_home
from assay.errors import LockHeldError


def lock_disabled() -> bool:
    return os.environ.get("ASSAY_NO_LOCK", "").strip().lower() in {"1", "true", "yes"}


class EvalLock:
    """Context manager holding the machine-wide eval lock."""

    def __init__(self, command: list[str], path: Path | None = None) -> None:
        self.command = command
        self.path = path or assay_home() / "eval.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise LockHeldError(
                f"another eval is running (pid {holder.get('pid', '?')}, started {holder.get('started_at', '?')}, "
                f"command: {holder.get('command', '?')}); wait for it, or set ASSAY_NO_LOCK=1 to run anyway"
            ) from None
        info = {
            "pid": os.getpid(),
            "command": " ".join(self.command),
            "started_at": datetime.now(UTC).isoformat(),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> EvalLock:
        if not lock_disabled():
            self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, object]:
    try:
        data = os.pread(fd, 65536, 0)
        holder = json.loads(data or b"{}")
        return holder if isinstance(holder, dict) else {}
    except (OSError, ValueError):
        return {}
