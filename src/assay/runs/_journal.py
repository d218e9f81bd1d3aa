"""``results.jsonl``: the append-only journal of attempts.

Each record is written and flushed as its attempt finishes, so a killed process loses at most the attempts
still in flight. ``fsync`` is grouped (at most every ``fsync_interval_s``, and on close) so that thousands
of fast attempts are not bound by the disk.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pydantic import ValidationError

from assay._util import Scrubber
from assay.errors import ResumeError
from assay.runs.records import FINAL_STATUSES, Attempt


class Journal:
    """Appends scrubbed attempts to ``results.jsonl``."""

    def __init__(self, path: Path, scrubber: Scrubber, fsync_interval_s: float = 0.05) -> None:
        self.path = path
        self.scrubber = scrubber
        self.fsync_interval_s = fsync_interval_s
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._last_sync = time.monotonic()
        self._dirty = False
        self._repair_tail()

    def _repair_tail(self) -> None:
        """A process killed mid-write can leave a partial last line; end it so the next record is whole."""
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        with open(self.path, "rb") as fh:
            fh.seek(size - 1)
            if fh.read(1) != b"\n":
                os.write(self._fd, b"\n")

    def append(self, attempt: Attempt) -> None:
        line = self.scrubber.clean(attempt.model_dump_json(), str(self.path)) + "\n"
        os.write(self._fd, line.encode("utf-8"))
        self._dirty = True
        now = time.monotonic()
        if now - self._last_sync >= self.fsync_interval_s:
            self.sync()

    def sync(self) -> None:
        if self._dirty:
            os.fsync(self._fd)
            self._dirty = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_journal(path: Path, damaged: list[int] | None = None) -> list[Attempt]:
    """All records in order. A damaged line (a write cut by a kill) is skipped and its number appended to
    ``damaged``; a file with no readable record at all is an error."""
    if not path.exists():
        return []
    attempts: list[Attempt] = []
    bad: list[int] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                attempts.append(Attempt.model_validate(json.loads(line)))
            except (json.JSONDecodeError, ValidationError):
                bad.append(lineno)
    if bad and not attempts:
        raise ResumeError(f"{path}:{bad[0]}: not an assay results journal (no readable attempt record)")
    if damaged is not None:
        damaged.extend(bad)
    return attempts


def latest_attempts(attempts: list[Attempt]) -> dict[tuple[str, int], Attempt]:
    """The record that counts for each (case, iteration): a final one beats a non-final one, later beats earlier."""
    chosen: dict[tuple[str, int], Attempt] = {}
    for att in attempts:
        prev = chosen.get(att.key)
        if prev is None or att.status in FINAL_STATUSES or prev.status not in FINAL_STATUSES:
            chosen[att.key] = att
    return chosen
