"""Work a timeout really stops: a worker thread told to stop between steps, and waited for.

Cancelling a coroutine that awaits ``asyncio.to_thread`` leaves the thread running: with a benchmark's
own lock released, it could go on changing a worktree the next case uses. :func:`run_stoppable` instead
raises the attempt's stop flag when it is cancelled (a ``--timeout``, a stopped run) and waits for the
thread to end before the cancellation goes on; the thread sees the flag at its next :func:`check_stop`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from assay._util import GRACE_S, cancel_requested

__all__ = ["AttemptStopped", "check_stop", "run_stoppable"]

T = TypeVar("T")

_STOP: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("assay_stop", default=None)


class AttemptStopped(Exception):
    """The attempt was stopped (its deadline passed or the run was interrupted) between two steps."""


def check_stop() -> None:
    """Raise :class:`AttemptStopped` if this attempt's work was told to stop; call it between steps."""
    flag = _STOP.get()
    if (flag is not None and flag.is_set()) or cancel_requested():
        raise AttemptStopped("stopped between steps (timeout or interrupt)")


async def run_stoppable(fn: Callable[..., T], *args: object) -> T:
    """``await asyncio.to_thread(fn, *args)``, where a cancellation stops ``fn`` and waits for its thread.

    After an interrupt (Ctrl-C) the thread is waited for at most the run's grace period; otherwise until
    it ends, so whatever lock the caller holds is held until then.
    """
    flag = threading.Event()
    ctx = contextvars.copy_context()
    ctx.run(_STOP.set, flag)
    work = asyncio.get_running_loop().run_in_executor(None, functools.partial(ctx.run, fn, *args))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        flag.set()
        deadline: float | None = None
        while not work.done():
            if cancel_requested():
                deadline = deadline or time.monotonic() + GRACE_S
                if time.monotonic() >= deadline:
                    break
            try:
                await asyncio.wait([work], timeout=0.05)
            except asyncio.CancelledError:  # cancelled again: keep waiting, the flag is already up
                continue
        if work.done() and not work.cancelled():
            work.exception()  # retrieved: the thread's AttemptStopped is the expected end
        raise
