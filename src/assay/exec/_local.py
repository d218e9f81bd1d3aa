"""Run attempts on this machine with bounded concurrency (asyncio).

Attempts are described by serialisable :class:`AttemptSpec` values, so another executor (Ray) can run the
same specs elsewhere without any benchmark knowing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from assay.runs import Attempt


@dataclass(frozen=True)
class AttemptSpec:
    """One attempt: which case (by index into the suite and id) and which iteration."""

    case_index: int
    case_id: str
    iteration: int

    def to_dict(self) -> dict[str, Any]:
        return {"case_index": self.case_index, "case_id": self.case_id, "iteration": self.iteration}


class RunStopped(Exception):
    """Raised by an attempt function to stop the whole run; carries the attempt record.

    ``exit_code`` 3: a backend outage; 1: a configuration error (a flag, file or env var the user can fix).
    """

    def __init__(self, attempt: Attempt, reason: str, exit_code: int = 3) -> None:
        super().__init__(reason)
        self.attempt = attempt
        self.reason = reason
        self.exit_code = exit_code


@dataclass
class ExecutionReport:
    finished: list[AttemptSpec]
    not_started: list[AttemptSpec]
    cancelled: list[AttemptSpec]
    stopped: RunStopped | None = None


async def run_local(
    specs: Sequence[AttemptSpec],
    attempt_fn: Callable[[AttemptSpec], Awaitable[Attempt]],
    on_result: Callable[[Attempt], None],
    max_concurrency: int = 4,
) -> ExecutionReport:
    """Run ``specs`` with at most ``max_concurrency`` in flight; ``on_result`` sees each record as it ends.

    When an attempt raises :class:`RunStopped`, no new attempt starts and the ones in flight are cancelled;
    the report says which never started and which were cancelled, so the caller can journal them.
    """
    pending = list(reversed(specs))
    finished: list[AttemptSpec] = []
    in_flight: dict[asyncio.Task[Attempt], AttemptSpec] = {}
    stopped: RunStopped | None = None
    limit = max(1, max_concurrency)

    try:
        while pending or in_flight:
            while pending and len(in_flight) < limit and stopped is None:
                spec = pending.pop()
                in_flight[asyncio.ensure_future(attempt_fn(spec))] = spec
            if not in_flight:
                break
            done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                spec = in_flight.pop(task)
                exc = task.exception()
                if isinstance(exc, RunStopped):
                    on_result(exc.attempt)
                    finished.append(spec)
                    stopped = stopped or exc
                elif exc is not None:
                    raise exc
                else:
                    on_result(task.result())
                    finished.append(spec)
            if stopped is not None:
                break
    finally:
        cancelled = list(in_flight.values())
        for task in in_flight:
            task.cancel()
        if in_flight:
            await asyncio.gather(*in_flight, return_exceptions=True)
    return ExecutionReport(
        finished=finished, not_started=list(reversed(pending)), cancelled=cancelled, stopped=stopped
    )
