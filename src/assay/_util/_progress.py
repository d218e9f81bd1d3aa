"""Progress of long work (attempts, fetching, indexing, embedding, replay) that someone can see.

Library code opens a :func:`phase` and ticks it; it costs nothing when no one reports. A command turns
reporting on with :func:`reporting`: on a terminal a rich bar per open phase, otherwise (CI, a pipe, a log)
one plain line on stderr at least every ``ASSAY_PROGRESS_INTERVAL`` seconds (default 5) while anything is
open, so a long phase is never silent. ``ASSAY_PROGRESS`` = ``auto`` (default), ``bar``, ``plain`` or ``off``.
Every tick also checks for Ctrl-C (:func:`~assay._util._cancel.check_cancelled`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sized
from contextlib import contextmanager
from typing import Any, Literal, TextIO, TypeVar

from assay._util._cancel import check_cancelled
from assay.errors import ConfigError

__all__ = ["Phase", "phase", "reporting", "ticking"]

T = TypeVar("T")
Mode = Literal["bar", "plain", "off"]
_MODES = ("auto", "bar", "plain", "off")


class Phase:
    """One piece of long work: ``done`` of ``total`` (None: unknown) ``unit``, plus a short note."""

    def __init__(
        self, label: str, total: int | None, unit: str, reporter: _Reporter | None, announce: bool = False
    ) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self.note = ""
        self.started = time.monotonic()
        self._reporter = reporter
        self._bar_task: Any = None
        self.announce = announce
        self.reported = False
        #: how it ended: "done", or "stopped" when the work raised (Ctrl-C, an error)
        self.outcome = "done"

    def advance(self, n: int = 1, *, note: str | None = None) -> None:
        """Count ``n`` more items done; raises :class:`~assay._util._cancel.Cancelled` after Ctrl-C."""
        check_cancelled()
        self.done += n
        if note is not None:
            self.note = note
        if self._reporter is not None:
            self._reporter.changed(self)

    def set_total(self, total: int | None) -> None:
        self.total = total
        if self._reporter is not None:
            self._reporter.changed(self)

    def describe(self) -> str:
        elapsed = f"{time.monotonic() - self.started:.0f}s"
        if self.total is None and not self.done:  # work that is not counted: say it is still going
            return f"{self.label}, {elapsed}"
        count = f"{self.done}/{self.total}" if self.total is not None else str(self.done)
        unit = f" {self.unit}" if self.unit else ""
        note = f" ({self.note})" if self.note else ""
        return f"{self.label}: {count}{unit}{note}, {elapsed}"


class _Reporter:
    def open(self, ph: Phase) -> None: ...
    def changed(self, ph: Phase) -> None: ...
    def close(self, ph: Phase) -> None: ...
    def stop(self) -> None: ...


class _Plain(_Reporter):
    """A line on stderr every ``interval`` seconds while a phase is open, and one when a reported phase ends."""

    def __init__(self, interval: float, stream: TextIO) -> None:
        self.interval, self.stream = interval, stream
        self.phases: list[Phase] = []
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="assay-progress", daemon=True)
        self.thread.start()

    def _emit(self, text: str) -> None:
        print(f"progress: {text}", file=self.stream, flush=True)

    def _beat(self) -> None:
        while not self.halt.wait(self.interval):
            with self.lock:
                if self.phases:
                    for ph in self.phases:
                        ph.reported = True
                    self._emit(" | ".join(ph.describe() for ph in self.phases))

    def open(self, ph: Phase) -> None:
        with self.lock:
            self.phases.append(ph)
            if ph.announce:
                ph.reported = True
                self._emit(
                    f"{ph.label}: {ph.total if ph.total is not None else '?'} {ph.unit} to do".rstrip()
                )

    def close(self, ph: Phase) -> None:
        with self.lock:
            if ph in self.phases:
                self.phases.remove(ph)
            if ph.reported:
                self._emit(f"{ph.describe()}, {ph.outcome}")

    def stop(self) -> None:
        self.halt.set()
        self.thread.join(timeout=1)


class _Bar(_Reporter):
    """A transient rich bar per open phase, on stderr."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[unit]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[note]}"),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()

    def open(self, ph: Phase) -> None:
        ph._bar_task = self.bar.add_task(ph.label, total=ph.total, unit=ph.unit, note="")

    def changed(self, ph: Phase) -> None:
        self.bar.update(ph._bar_task, completed=ph.done, total=ph.total, note=ph.note)

    def close(self, ph: Phase) -> None:
        self.bar.remove_task(ph._bar_task)

    def stop(self) -> None:
        self.bar.stop()


_active: _Reporter | None = None


def _mode(enabled: bool, stream: TextIO) -> Mode:
    if not enabled:
        return "off"
    raw = os.environ.get("ASSAY_PROGRESS", "auto").strip().lower() or "auto"
    if raw not in _MODES:
        raise ConfigError(f"ASSAY_PROGRESS must be one of {', '.join(_MODES)}, not {raw!r}")
    if raw == "auto":
        return "bar" if stream.isatty() else "plain"
    return raw  # type: ignore[return-value]


def _interval() -> float:
    raw = os.environ.get("ASSAY_PROGRESS_INTERVAL", "").strip()
    if not raw:
        return 5.0
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ConfigError(f"ASSAY_PROGRESS_INTERVAL must be a number of seconds above 0, not {raw!r}")
    return value


@contextmanager
def reporting(enabled: bool = True) -> Iterator[None]:
    """Report the phases opened inside (in any thread) until the block ends; nested calls share one."""
    global _active
    mode = _mode(enabled, sys.stderr)
    if _active is not None or mode == "off":
        yield
        return
    _active = _Bar() if mode == "bar" else _Plain(_interval(), sys.stderr)
    try:
        yield
    finally:
        reporter, _active = _active, None
        reporter.stop()


@contextmanager
def phase(label: str, total: int | None = None, unit: str = "", *, announce: bool = False) -> Iterator[Phase]:
    """Open a phase of work; tick it with :meth:`Phase.advance` (which also checks for Ctrl-C).

    ``announce``: in plain mode say at once that it started (the runner's attempts), not only after a while.
    """
    check_cancelled()
    reporter = _active
    ph = Phase(label, total, unit, reporter, announce)
    if reporter is not None:
        reporter.open(ph)
    try:
        yield ph
    except BaseException:
        ph.outcome = "stopped"
        raise
    finally:
        if reporter is not None:
            reporter.close(ph)


def ticking(items: Iterable[T], label: str, unit: str = "") -> Iterator[T]:
    """``for x in ticking(items, label):`` is a phase that ticks after each item (and stops on Ctrl-C)."""
    with phase(label, total=len(items) if isinstance(items, Sized) else None, unit=unit) as ph:
        for item in items:
            yield item
            ph.advance()
