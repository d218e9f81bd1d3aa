"""Where the memory store gets the time from: the wall clock, or a manual clock that runs months in seconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock", "from_ts", "to_ts"]


@runtime_checkable
class Clock(Protocol):
    """Every store operation asks this for "now" (timezone-aware UTC)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real time."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that only moves when told to; the memory benchmark steps it through simulated months."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = _aware(start or datetime(2026, 1, 1, tzinfo=UTC))

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        when = _aware(when)
        if when < self._now:
            raise ValueError(
                f"ManualClock cannot go back in time ({when.isoformat()} < {self._now.isoformat()})"
            )
        self._now = when

    def advance(self, delta: timedelta) -> None:
        self.set(self._now + delta)


def _aware(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def to_ts(when: datetime) -> float:
    """Seconds since the epoch, as stored in SQLite."""
    return _aware(when).timestamp()


def from_ts(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)
