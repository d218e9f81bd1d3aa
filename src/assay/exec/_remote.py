"""A run's attempts on Ray workers (``--executor ray``): the job a worker rebuilds, and the driver's side.

The driver sends each worker a :class:`RemoteJob` (plain data: the benchmark's class path and options, the
suite's name and case ids, the run's settings). A worker process rebuilds the benchmark from it once, sets it
up in a private scratch run directory, and then attempts cases with the runner's own :meth:`_Run.attempt`,
so statuses, timeouts, outages and configuration errors are decided exactly as on one machine. Each reply
carries the attempt record and the files the attempt wrote in the scratch directory; the driver writes those
files into the real run directory and journals the record, so the journal never leaves the driver.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay import __version__
from assay.errors import AssayError, ConfigError, ExitCode, InfraError
from assay.exec._local import AttemptSpec, RunStopped
from assay.exec._run import RunOptions, _Run
from assay.runs import Attempt, ErrorInfo, RunMeta, Status

#: the most file bytes one reply carries back; larger outputs stay on the worker (and are named)
MAX_REPLY_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class RemoteJob:
    """Everything a worker needs to attempt a run's cases (no live objects: it is rebuilt there)."""

    benchmark_class: str
    options: dict[str, Any]
    meta: dict[str, Any]
    run_dir: str
    timeout_s: float | None
    #: the commit the driver's records carry, and its working directory (relative paths in options)
    commit: str | None
    cwd: str
    #: this session of the run (a resume is another): what a worker's set-up benchmark is kept under
    key: str = field(default_factory=lambda: uuid.uuid4().hex)


def remote_job(run: _Run) -> RemoteJob:
    """The job of a prepared run."""
    cls = type(run.bench)
    return RemoteJob(
        benchmark_class=f"{cls.__module__}:{cls.__qualname__}",
        options=run.bench.options.model_dump(mode="json"),
        meta=run.meta.model_dump(mode="json"),
        run_dir=str(run.run_dir),
        timeout_s=run.opts.timeout_s,
        commit=run.commit,
        cwd=os.getcwd(),
    )


# --- on the worker ---------------------------------------------------------------------------------------


class _WorkerRun:
    """One run's benchmark, set up in this worker process, with its scratch run directory."""

    def __init__(self, job: RemoteJob) -> None:
        meta = RunMeta.model_validate(job.meta)
        if meta.assay_version != __version__:
            raise ConfigError(
                f"the Ray worker on {os.uname().nodename} runs assay {__version__}, the driver "
                f"{meta.assay_version}: install the driver's assay on every worker"
            )
        if Path(job.cwd).is_dir():  # a shared checkout at the same path: relative options mean the same
            os.chdir(job.cwd)
        module, _, attr = job.benchmark_class.partition(":")
        cls = getattr(__import__(module, fromlist=[attr]), attr)
        bench = cls(dict(job.options))
        suite = bench.load_suite(meta.suite)
        if suite.case_ids() != meta.case_ids:
            raise ConfigError(
                f"the Ray worker on {os.uname().nodename} reads a different {meta.suite!r} suite than the driver "
                "(its case ids differ): give every worker the driver's checkout"
            )
        self.scratch = _SCRATCH_ROOT / f"{meta.run_id}-w{os.getpid()}"
        _sweep_scratch()
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.scratch.mkdir(parents=True)
        self.loop = asyncio.new_event_loop()
        self.run = _Run(bench, suite, meta, self.scratch, RunOptions(timeout_s=job.timeout_s))
        self.run.commit = job.commit
        self.loop.run_until_complete(bench.setup(str(self.scratch)))
        self.driver_dir = job.run_dir
        self._seen: dict[str, tuple[int, int]] = {}

    def attempt(self, spec: AttemptSpec) -> dict[str, Any]:
        stopped: dict[str, Any] | None = None
        try:
            record = self.loop.run_until_complete(self.run.attempt(spec))
        except RunStopped as stop:
            record = stop.attempt
            stopped = {"reason": stop.reason, "exit_code": stop.exit_code}
        files, left = self._new_files()
        text = record.model_dump_json().replace(str(self.scratch), self.driver_dir)
        return {"attempt": text, "stopped": stopped, "files": files, "left_on_worker": left}

    def _new_files(self) -> tuple[dict[str, bytes], list[str]]:
        """Files written or changed under the scratch directory since the last reply."""
        files: dict[str, bytes] = {}
        left: list[str] = []
        budget = MAX_REPLY_BYTES
        for path in sorted(p for p in self.scratch.rglob("*") if p.is_file() and not p.is_symlink()):
            st = path.stat()
            rel = path.relative_to(self.scratch).as_posix()
            if self._seen.get(rel) == (st.st_mtime_ns, st.st_size):
                continue
            self._seen[rel] = (st.st_mtime_ns, st.st_size)
            if st.st_size > budget:
                left.append(rel)
                continue
            files[rel] = path.read_bytes()
            budget -= st.st_size
        return files, left

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.run.bench.teardown())
        finally:
            self.loop.close()
            shutil.rmtree(self.scratch, ignore_errors=True)


_WORKER: dict[str, _WorkerRun] = {}
_SCRATCH_ROOT = Path(tempfile.gettempdir()) / "assay-ray"


def _sweep_scratch() -> None:
    """Remove the scratch directories of worker processes that are gone (Ray ends idle workers by signal)."""
    import psutil

    for entry in _SCRATCH_ROOT.glob("*-w*"):
        pid = entry.name.rpartition("-w")[2]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _close_worker_runs() -> None:
    for key in list(_WORKER):
        _WORKER.pop(key).close()


atexit.register(_close_worker_runs)


def attempt_on_worker(job: RemoteJob, spec: dict[str, Any]) -> dict[str, Any]:
    """The Ray task: attempt one case of ``job`` in this worker process (the benchmark rebuilt once)."""
    state = _WORKER.get(job.key)
    if state is None:
        _close_worker_runs()  # a worker serves one run at a time: the previous run's set-up is let go
        try:
            state = _WORKER[job.key] = _WorkerRun(job)
        except Exception as exc:  # the run stops, as a failed set-up stops it on one machine
            if isinstance(exc, AssayError):
                code = exc.exit_code
            else:  # a missing module or class: the worker's install; anything else: its environment
                code = (
                    ExitCode.USAGE
                    if isinstance(exc, ImportError | AttributeError)
                    else ExitCode.NOT_COMPARABLE
                )
            return {"refused": f"{type(exc).__name__}: {exc}", "exit_code": int(code)}
    return state.attempt(AttemptSpec(**spec))


# --- on the driver ---------------------------------------------------------------------------------------


def ray_attempts(
    run: _Run, address: str
) -> tuple[Callable[[AttemptSpec], Awaitable[Attempt]], Callable[[], None]]:
    """Join the cluster and return the run's attempt function there, and what closes the session.

    Raises InfraError when the head cannot be reached and ConfigError when no node meets the benchmark's
    resource requests, before any attempt runs.
    """
    from assay.exec._ray import HeadLost, RayExecutor, WorkerLost, check_resources, connect, forwarded_env

    cluster = connect(address)
    resources = run.bench.attempt_resources()
    try:
        check_resources(resources)
        executor = RayExecutor(cluster, attempt_on_worker, remote_job(run), resources, forwarded_env())
    except BaseException:
        cluster.close()
        raise

    async def attempt(spec: AttemptSpec) -> Attempt:
        case = run.suite.cases[spec.case_index]
        try:
            reply = await executor.call(spec)
        except WorkerLost as exc:  # not the subject's doing: INFRA_ERROR, and the run goes on
            return _lost(run, spec, case.category, "WorkerLost", str(exc))
        except HeadLost as exc:
            rec = _lost(run, spec, case.category, "HeadLost", str(exc))
            raise RunStopped(rec, str(exc), exit_code=ExitCode.NOT_COMPARABLE) from None
        if "refused" in reply:
            rec = _lost(run, spec, case.category, "WorkerSetup", reply["refused"], Status.NOT_RUN)
            raise RunStopped(
                rec, f"a Ray worker could not set up the run: {reply['refused']}", reply["exit_code"]
            )
        _write_files(Path(run.run_dir), reply["files"], reply["left_on_worker"])
        record = Attempt.model_validate_json(reply["attempt"])
        if reply["stopped"] is not None:
            raise RunStopped(record, reply["stopped"]["reason"], reply["stopped"]["exit_code"])
        return record

    return attempt, cluster.close


def _lost(
    run: _Run, spec: AttemptSpec, category: str, kind: str, message: str, status: Status = Status.INFRA_ERROR
) -> Attempt:
    from datetime import UTC, datetime

    return Attempt(
        case_id=spec.case_id,
        iteration=spec.iteration,
        category=category,
        status=status,
        started_at=datetime.now(UTC),
        commit=run.commit,
        error=ErrorInfo(type=kind, message=message[:2000]),
        skip_reason=message[:2000] if status is Status.NOT_RUN else None,
    )


def _write_files(run_dir: Path, files: dict[str, bytes], left: list[str]) -> None:
    root = run_dir.resolve()
    for rel, data in files.items():
        target = (root / rel).resolve()
        if not target.is_relative_to(root):  # a worker names only paths under its scratch directory
            raise InfraError(f"a Ray worker sent a file outside the run directory: {rel!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if left:
        print(
            f"warning: {len(left)} file(s) over {MAX_REPLY_BYTES // 2**20} MiB stayed on the Ray worker: "
            + ", ".join(left[:5]),
            file=sys.stderr,
        )
