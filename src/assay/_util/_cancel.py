"""Stop a run within a second or two of Ctrl-C, wherever its work is.

One process-wide cancel flag is raised by the first Ctrl-C. Coroutines are cancelled by asyncio; work in
threads and in the event loop's own thread sees the flag at its next :func:`check_cancelled` (every batch of
an embedding or indexing loop, every tick of :class:`~assay._util._progress.Phase`); child processes started
with :func:`run_process` are terminated. Worker threads are daemons: a thread that never looks at the flag
is given a short grace period and then left behind, so it cannot hold the process open. A second Ctrl-C
raises ``KeyboardInterrupt`` at once.
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = [
    "Cancelled", "cancel_requested", "check_cancelled", "run_interruptible", "run_process", "say_stopped", "stop_said",
]  # fmt: skip

T = TypeVar("T")

#: how long an interrupted run waits for worker threads to notice the flag
GRACE_S = 1.0

_CANCEL = threading.Event()
#: the stopped run printed its one stop line (what stopped it, how to resume): the CLI adds nothing after it
_SAID = threading.Event()


class Cancelled(asyncio.CancelledError):
    """The run was interrupted (Ctrl-C); raised by :func:`check_cancelled` between batches of work."""


def cancel_requested() -> bool:
    return _CANCEL.is_set()


def check_cancelled() -> None:
    """Raise :class:`Cancelled` if the run was interrupted; cheap enough to call once per item."""
    if _CANCEL.is_set():
        raise Cancelled("interrupted")


def say_stopped(line: str) -> None:
    """Print a stopped run's one line (how it stopped and how to resume it) on stderr, said once."""
    print(line, file=sys.stderr, flush=True)
    _SAID.set()


def stop_said() -> bool:
    """Whether the run already printed its stop line (:func:`say_stopped`)."""
    return _SAID.is_set()


def request_cancel() -> None:
    _CANCEL.set()


def run_process(
    cmd: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    errors: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(cmd, capture_output=True, text=True)`` that terminates the child on an interrupt."""
    check_cancelled()
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors=errors,
    )
    while True:
        try:
            out, err = proc.communicate(timeout=0.1)  # retrying after a timeout loses no output
            return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            if _CANCEL.is_set():
                _stop(proc)
                raise Cancelled(f"interrupted: {cmd[0]} was stopped") from None


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.communicate(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


class _DaemonPool(ThreadPoolExecutor):
    """The event loop's default executor (``asyncio.to_thread``): daemon worker threads, joined only briefly
    once the run was interrupted. (A ``ThreadPoolExecutor`` only because asyncio insists; it overrides all
    that pool does, whose threads the interpreter would join at exit.)"""

    def __init__(self, max_workers: int = min(32, (os.cpu_count() or 1) + 4)) -> None:
        super().__init__(max_workers=max_workers)
        self._max = max_workers
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple, dict] | None] = (
            queue.SimpleQueue()
        )
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        fut: Future[T] = Future()
        with self._lock:
            self._work.put((fut, fn, args, kwargs))
            if self._idle > 0:  # an idle worker takes it
                self._idle -= 1
            elif len(self._threads) < self._max:
                t = threading.Thread(
                    target=self._worker, name=f"assay-worker-{len(self._threads)}", daemon=True
                )
                self._threads.append(t)
                t.start()
        return fut

    def _worker(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            fut, fn, args, kwargs = item
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args, **kwargs))
                except BaseException as exc:
                    fut.set_exception(exc)
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._work.put(None)
        if not wait:
            return
        deadline = time.monotonic() + GRACE_S if _CANCEL.is_set() else None
        for t in threads:
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` where the first Ctrl-C (or SIGTERM) raises the cancel flag and cancels ``main`` at once (even
    while the loop's thread is busy in synchronous code) and raises ``KeyboardInterrupt`` after ``main`` has
    cleaned up; worker threads are not waited for beyond :data:`GRACE_S`."""
    _CANCEL.clear()
    _SAID.clear()  # a new run has said nothing yet
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    pool = _DaemonPool()
    loop.set_default_executor(pool)
    task = loop.create_task(main)
    interrupted = False

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupted
        if interrupted:
            raise KeyboardInterrupt
        interrupted = True
        _CANCEL.set()
        task.cancel()
        loop.call_soon_threadsafe(lambda: None)  # wake the loop if it waits on a thread

    installed = threading.current_thread() is threading.main_thread()
    # SIGTERM (a CI job cancelled, `kill`) stops the run as Ctrl-C does: the journal kept, children stopped
    previous = signal.signal(signal.SIGINT, on_sigint) if installed else None
    previous_term = signal.signal(signal.SIGTERM, on_sigint) if installed else None
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        try:
            left = asyncio.all_tasks(loop)
            for other in left:
                other.cancel()
            if left:
                loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            pool.shutdown(wait=True)
        finally:
            _CANCEL.clear()  # what runs next in this process (a notebook, a test) starts afresh
            if installed:
                signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
                signal.signal(signal.SIGTERM, previous_term if previous_term is not None else signal.SIG_DFL)
            asyncio.set_event_loop(None)
            loop.close()
