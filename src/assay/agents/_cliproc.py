"""Run an agent's process for the CLI harnesses: its own process group, output read line by line, a wall clock.

The command comes wrapped by :func:`held` (through :func:`assay.agents._pidns.own_pids` or the fence): the
limits' keeper :mod:`assay.agents._inside` runs between the wall and the agent and reports, on a pipe the agent
never holds, which limit stopped it and what it left running. On the wall clock (or a harness's own cap) the
agent's whole tree gets SIGTERM, then SIGKILL after a grace period, what was running is recorded, and what was
read until then is kept; stdout is kept up to ``Limits.output_kb``. The environment comes from
:func:`assay.agents._env.agent_env` (no provider key, the route to the gateway).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import re
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.agents import _inside
from assay.agents.record import RESOURCE_CUT_OFFS, AgentResult, Containment, Limits

_STDERR_CAP = 64_000
#: stands for the report pipe's fd in a held command's argv until :func:`run_streaming` opens the pipe
REPORT_FD = "@ASSAY_REPORT_FD@"
_OUT_OF_MEMORY = re.compile(r"MemoryError|std::bad_alloc|[Oo]ut of memory|Cannot allocate memory")
#: seconds an agent has between SIGTERM and SIGKILL at the end of its attempt
GRACE_S = 3.0


def _inside_program() -> str:
    """The keeper to run: its compiled file where this import left a current one (a script is compiled anew at
    every start, ~20 ms), else its source."""
    source = Path(_inside.__file__).resolve()
    cached = getattr(_inside, "__cached__", None)
    try:
        header = Path(cached).read_bytes()[:16] if cached else b""
        stat = source.stat()
    except OSError:
        return str(source)
    if (
        len(header) == 16
        and header[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(header[4:8], "little") == 0  # stamped by time and size, not by hash
        and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
        and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF
    ):
        return str(Path(cached).resolve())
    return str(source)


INSIDE_SCRIPT = _inside_program()


@dataclass
class ProcResult:
    exit_code: int | None
    stdout_lines: list[str] = field(default_factory=list)
    stderr: str = ""
    timed_out: bool = False
    stopped: bool = False
    elapsed_s: float = 0.0
    #: what :mod:`assay.agents._inside` reported (None: the command was not held by it, or it was killed)
    report: dict[str, Any] | None = None
    #: the agent's processes still running when it was stopped here (wall clock, a cap), and those that
    #: needed SIGKILL
    killed: list[str] = field(default_factory=list)
    killed_hard: list[str] = field(default_factory=list)
    output_bytes: int = 0
    output_dropped: int = 0

    @property
    def stopped_by(self) -> str | None:
        return (self.report or {}).get("stopped_by")


def interpreter() -> tuple[str, Path | None]:
    """The Python that runs the limits' keeper (and the fence's relay), and its prefix when that must be bound
    under the fence (not under /usr). The prefix is this Python's installation, not a venv: a bare task venv
    made from it needs it too."""
    exe = Path(os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable))
    prefix = Path(sys.base_prefix).resolve()
    return str(exe), None if prefix.is_relative_to("/usr") else prefix


def keeper_options(limits: Limits | None, workdir: Path | str | None, *, report: bool = True) -> list[str]:
    """The options of :mod:`assay.agents._inside` that hold a process to ``limits`` (its disk: ``workdir``);
    ``report``: on the pipe :func:`run_streaming` opens (a caller running the command itself says False)."""
    opts = ["--report-fd", REPORT_FD] if report else []
    opts += ["--grace", str(GRACE_S)]
    if limits is None:
        return opts
    if limits.max_procs is not None:
        opts += ["--max-procs", str(limits.max_procs)]
    if limits.memory_mb is not None:
        opts += ["--memory", str(limits.memory_mb * 2**20)]
    if limits.disk_mb is not None and workdir is not None:
        opts += ["--disk", str(limits.disk_mb * 2**20), "--disk-dir", str(Path(workdir).resolve())]
    return opts


def held(
    argv: Sequence[str], limits: Limits | None, workdir: Path | str | None, *, report: bool = True
) -> list[str]:
    """``argv`` run by the limits' keeper (:mod:`assay.agents._inside`), outside any fence (on Linux: elsewhere
    only the wall clock and the output kept hold, and the process group is ended)."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    exe, _ = interpreter()
    return [exe, "-I", "-S", INSIDE_SCRIPT, *keeper_options(limits, workdir, report=report), "--", *argv]


def _launchers(root: int, found: Mapping[int, Any]) -> set[int]:
    """The processes of the wrapping (bwrap, the keeper) in ``root``'s tree: not the agent's."""
    out = set()
    for pid in found:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                words = fh.read().split(b"\0")
        except OSError:
            continue
        if Path(words[0].decode(errors="replace")).name in ("bwrap", "unshare") or any(
            w.endswith((b"_inside.py", b"/inside.py", b".pyc")) for w in words[1:4]
        ):
            out.add(pid)
    return out


def stop_tree(root: int, grace_s: float = GRACE_S) -> tuple[list[str], list[str]]:
    """End ``root``'s whole tree: the agent's processes get SIGTERM, and what is left after ``grace_s`` (the
    wrapping too) SIGKILL. Returns the names of the agent's processes found running, and of those SIGKILLed."""
    found = _inside.tree(root)
    launchers = _launchers(root, found)
    agent = {p: name for p, (name, _rss) in found.items() if p not in launchers}
    if agent and grace_s > 0:
        for pid in agent:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(p in agent for p in _inside.tree(root)):
            time.sleep(0.05)
    left = _inside.tree(root)
    hard = sorted(name for p, (name, _rss) in left.items() if p not in launchers)
    _inside.kill_tree(root, 0)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(root, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(root, signal.SIGKILL)
    return sorted(agent.values()), hard


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
    limits: Limits | None = None,
) -> ProcResult:
    """Run ``argv`` in ``cwd``; call ``on_line`` for each stdout line as it arrives; stop the tree on the cap.

    ``on_line`` returning True, or ``watch`` (awaited every ``watch_every_s``) returning True, stops the tree
    too (a harness enforcing a token cap); ``stopped`` says so. ``limits.output_kb``: stdout kept."""
    started = time.monotonic()
    argv = list(argv)
    read_fd = write_fd = None
    if REPORT_FD in argv:  # held by the keeper: its report comes on a pipe only it holds
        read_fd, write_fd = os.pipe()
        argv[argv.index(REPORT_FD)] = str(write_fd)
    keep = limits.output_kb * 1024 if limits is not None and limits.output_kb is not None else None
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=dict(env),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=(write_fd,) if write_fd is not None else (),
        )
    finally:
        if write_fd is not None:
            os.close(write_fd)
    result = ProcResult(exit_code=None)
    err_chunks: list[bytes] = []
    stop = asyncio.Event()

    def take(raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if keep is not None and result.output_bytes > keep:
            result.output_dropped += len(raw)
        else:
            result.stdout_lines.append(line)
        if on_line is not None and not result.stopped and on_line(line):
            result.stopped = True
            stop.set()

    async def read_out() -> None:
        assert proc.stdout is not None
        pending = b""
        while chunk := await proc.stdout.read(65536):
            result.output_bytes += len(chunk)
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                take(raw)
            if keep is not None and len(pending) > keep:  # a line without end: counted, not kept
                result.output_dropped += len(pending)
                pending = b""
        if pending:
            take(pending)

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
                stop.set()
                return

    work = asyncio.gather(read_out(), read_err(), feed(), proc.wait())
    side = [asyncio.ensure_future(stop.wait())]
    if watch is not None:
        side.append(asyncio.ensure_future(watcher()))
    cancelled = False
    try:
        finished = asyncio.ensure_future(asyncio.shield(work))
        done, _ = await asyncio.wait(
            [finished, *side], timeout=wall_clock_s, return_when=asyncio.FIRST_COMPLETED
        )
        result.timed_out = not done
    except asyncio.CancelledError:
        cancelled = True
        await asyncio.to_thread(stop_tree, proc.pid, 0)
        raise
    finally:
        for task in side:
            task.cancel()
        if proc.returncode is None and not cancelled:
            result.killed, result.killed_hard = await asyncio.to_thread(stop_tree, proc.pid)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), timeout=5)
            # what kept the pipes open is gone with the tree; drain what is left
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(work, timeout=3)
        if not work.done():
            work.cancel()
            with contextlib.suppress(BaseException):
                await work
        if read_fd is not None:
            result.report = _read_report(read_fd)
    result.exit_code = proc.returncode
    result.stderr = b"".join(err_chunks).decode("utf-8", errors="replace")[-_STDERR_CAP:]
    result.elapsed_s = time.monotonic() - started
    return result


def _read_report(fd: int) -> dict[str, Any] | None:
    os.set_blocking(fd, False)
    chunks = []
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    os.close(fd)
    try:
        report = json.loads(b"".join(chunks)) if chunks else None
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


def contain(
    result: AgentResult, proc: ProcResult, limits: Limits | None, *, fenced: bool, note: str | None = None
) -> AgentResult:
    """Record on ``result`` how its process was held (:class:`Containment`); an agent stopped over a resource
    limit is cut off by it and broke (ERROR, with the reason), whatever it did before."""
    report = proc.report or {}
    stopped_by = report.get("stopped_by") or (
        "wall_clock" if proc.timed_out else ("tokens" if proc.stopped else None)
    )
    reason = report.get("reason")
    if (
        stopped_by is None
        and limits is not None
        and limits.memory_mb is not None
        and proc.exit_code not in (0, None)
        and _OUT_OF_MEMORY.search(proc.stderr[-4000:])
    ):  # one allocation past the backstop (RLIMIT_DATA, twice the limit) fails before a look sees it
        stopped_by = "memory"
        reason = f"an allocation failed at the memory backstop ({2 * limits.memory_mb} MB for one process)"
    if stopped_by == "wall_clock" and limits is not None:
        reason = f"ran past the wall clock of {limits.wall_clock_s:g} s"
    killed = list(report.get("killed") or []) + proc.killed
    hard = list(report.get("killed_hard") or []) + proc.killed_hard
    peak_rss, disk = report.get("peak_rss"), report.get("disk_added")
    result.containment = Containment(
        fenced=fenced,
        note=note,
        limits=limits.model_dump(exclude={"max_steps", "max_tokens"}) if limits is not None else {},
        stopped_by=stopped_by,
        reason=reason,
        killed=killed,
        killed_hard=hard,
        peak_procs=report.get("peak_procs"),
        peak_rss_mb=round(peak_rss / 2**20, 1) if isinstance(peak_rss, int) else None,
        disk_added_mb=round(disk / 2**20, 1) if isinstance(disk, int) else None,
        output_bytes=proc.output_bytes,
        output_dropped_bytes=proc.output_dropped,
    )
    if stopped_by in RESOURCE_CUT_OFFS:
        result.cut_off = stopped_by
        result.error = f"stopped over the {stopped_by} limit: {reason}"
        result.infra_error = None
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
