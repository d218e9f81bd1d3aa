"""Run an agent's process for the CLI harnesses: its own process group, output read line by line, a wall clock.

On the cap the whole group is stopped (TERM, then KILL) and what was read until then is kept. The environment
comes from :func:`assay.agents._env.agent_env` (no provider key, the route to the gateway).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_STDERR_CAP = 64_000


@dataclass
class ProcResult:
    exit_code: int | None
    stdout_lines: list[str] = field(default_factory=list)
    stderr: str = ""
    timed_out: bool = False
    stopped: bool = False
    elapsed_s: float = 0.0


def _kill_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


async def run_streaming(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    wall_clock_s: float | None,
    on_line: Callable[[str], bool | None] | None = None,
    stdin: bytes | None = None,
    watch: Callable[[], Awaitable[bool]] | None = None,
    watch_every_s: float = 0.5,
) -> ProcResult:
    """Run ``argv`` in ``cwd``; call ``on_line`` for each stdout line as it arrives; stop the group on the cap.

    ``on_line`` returning True, or ``watch`` (awaited every ``watch_every_s``) returning True, stops the group
    too (a harness enforcing a token cap); ``stopped`` says so."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        env=dict(env),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=32 * 1024 * 1024,
    )
    result = ProcResult(exit_code=None)
    err_chunks: list[bytes] = []

    async def read_out() -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            result.stdout_lines.append(line)
            if on_line is not None and on_line(line) and not result.stopped:
                result.stopped = True
                _kill_group(proc, signal.SIGTERM)

    async def read_err() -> None:
        assert proc.stderr is not None
        size = 0
        while chunk := await proc.stderr.read(65536):
            if size < _STDERR_CAP:
                err_chunks.append(chunk)
                size += len(chunk)

    async def feed() -> None:
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(stdin)
                await proc.stdin.drain()
                proc.stdin.close()

    async def watcher() -> None:
        assert watch is not None
        while proc.returncode is None:
            await asyncio.sleep(watch_every_s)
            if proc.returncode is None and await watch():
                result.stopped = True
                _kill_group(proc, signal.SIGTERM)
                await asyncio.sleep(3)
                _kill_group(proc, signal.SIGKILL)
                return

    work = asyncio.gather(read_out(), read_err(), feed(), proc.wait())
    watching = asyncio.create_task(watcher()) if watch is not None else None
    try:
        await asyncio.wait_for(asyncio.shield(work), timeout=wall_clock_s)
    except TimeoutError:
        result.timed_out = True
    except asyncio.CancelledError:
        _kill_group(proc, signal.SIGKILL)
        raise
    finally:
        if watching is not None:
            watching.cancel()
        if proc.returncode is None or result.timed_out:
            _kill_group(proc, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), timeout=3)
            except TimeoutError:
                _kill_group(proc, signal.SIGKILL)
                await proc.wait()
            # children that kept the pipes open are gone with the group; drain what is left
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(work, timeout=3)
        if not work.done():
            work.cancel()
            with contextlib.suppress(BaseException):
                await work
    result.exit_code = proc.returncode
    result.stderr = b"".join(err_chunks).decode("utf-8", errors="replace")[-_STDERR_CAP:]
    result.elapsed_s = time.monotonic() - started
    return result


def summarize(text: str, cap: int = 300) -> str:
    """A result summary: the text, cut to about ``cap`` characters with a marker. The cut keeps the head and
    the tail (two fifths and three fifths): a command's verdict is often its last line (pytest's summary)."""
    text = text.strip()
    if len(text) <= cap:
        return text
    keep = max(cap - len(f" [... {len(text)} chars cut ...] "), 0)  # the marker fits within the cap
    head = keep * 2 // 5
    tail = keep - head
    return f"{text[:head]} [... {len(text) - keep} chars cut ...] {text[len(text) - tail :]}"


def relative_path(path: str, workdir: Path) -> str:
    """``path`` relative to the workdir where it is inside it; otherwise as given (a scorer sees the escape)."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    for base in (workdir, workdir.resolve()):
        with contextlib.suppress(ValueError):
            return p.relative_to(base).as_posix()
    return p.as_posix()


def refuse_fence(fence: bool, harness: str) -> None:
    """``--fence`` wraps an agent's process in bubblewrap; a harness with no process of its own refuses it."""
    if fence:
        from assay.errors import ConfigError

        raise ConfigError(f"--fence: the {harness} harness runs no agent process of its own to fence")


async def gateway_usage(route: Any, since: int = 0) -> Any | None:
    """What the route's model gateway counted (:class:`~assay.agents.gateway.GatewayUsage`), or None where
    the route leads to no gateway (a plain server, no route, the gateway extra not installed)."""
    if route is None:
        return None
    try:
        from assay.agents.gateway import fetch_usage
    except ImportError:
        return None
    from assay.errors import ConfigError, InfraError

    try:
        return await fetch_usage(route, since=since)
    except (InfraError, ConfigError, ValueError):
        return None


class OwnGateway:
    """A model gateway a harness starts for itself when the run brings no route: ``--model SPEC`` alone.

    Started on first use (the upstream built from the ``assay.models`` spec), one route per run so its calls are
    counted apart, stopped by :meth:`close`."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._gateway: Any = None

    def route(self, ask: str | None = None) -> Any:
        """A fresh run's route; ``ask`` is the model name the agent asks for (default: the upstream's)."""
        from assay.agents.gateway import Gateway

        if self._gateway is None:
            self._gateway = Gateway(self.model).start()
        return self._gateway.route(ask, run=Gateway.new_run_id())

    def close(self) -> None:
        if self._gateway is not None:
            self._gateway.stop()
            self._gateway = None
