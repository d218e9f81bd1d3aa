"""Run a benchmark: suite -> attempts -> journal -> scorecard -> report, with resume and outage handling."""

from __future__ import annotations

import asyncio
import importlib
import shutil
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay import __version__
from assay._util import Scrubber, phase, reporting, run_interruptible, say_stopped
from assay.errors import ConfigError, ExitCode, InfraError, MissingDependencyError, ResumeError
from assay.exec._benchmark import Benchmark, Suite
from assay.exec._local import run_local
from assay.exec._run import RunOptions, _Run
from assay.gate import GateOptions, Verdict, hold
from assay.runs import (
    Attempt,
    EvalLock,
    Journal,
    RunMeta,
    Scorecard,
    latest_attempts,
    load_meta,
    read_journal,
)
from assay.runs.provenance import git_commit, git_dirty, machine
from assay.runs.rundir import JOURNAL, META, SCORECARD, new_run_dir, write_model

#: exit codes shared by every command (see DESIGN.md and ``assay.errors.ExitCode``)
EXIT_OK, EXIT_USAGE, EXIT_REGRESSION, EXIT_NOT_COMPARABLE = (
    ExitCode.OK,
    ExitCode.USAGE,
    ExitCode.REGRESSION,
    ExitCode.NOT_COMPARABLE,
)


@dataclass
class RunResult:
    run_dir: Path
    scorecard: Scorecard
    #: what ``gate.hold`` decided: the comparison, expectations, completeness, the exit code and why
    verdict: Verdict
    stopped_reason: str | None = None
    #: the benchmark that ran (its ``failure_reason`` explains failing cases)
    benchmark: Benchmark | None = None
    meta: RunMeta | None = None
    #: each case's latest attempt per iteration, as folded into the scorecard
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The verdict's exit code (a stop wins: 3 after an outage, 1 after a configuration error)."""
        return self.verdict.exit_code

    @property
    def resume_command(self) -> str:
        return resume_command(self.benchmark or self.scorecard.benchmark, self.run_dir)


def resume_command(benchmark: Benchmark | type[Benchmark] | str, run_dir: Path) -> str:
    """The command that resumes a run: that of the benchmark class it ran (`retrieval-rag` runs belong to
    `assay eval retrieval`, the registered name of their class; a plugin named `ray-sleep` is its own command).

    A name (a run whose class cannot be loaded) is used as it is.
    """
    if isinstance(benchmark, str):
        command = benchmark
    else:
        command = (benchmark if isinstance(benchmark, type) else type(benchmark)).name
    return f"assay eval {command} --resume {run_dir}"


def load_benchmark_class(meta: RunMeta, where: Path, given: type[Benchmark] | None = None) -> type[Benchmark]:
    """The benchmark class a run recorded (``meta.options['benchmark_class']``, ``module:Class``); ``given``
    (the caller's class) serves a run that recorded none."""
    spec = str(meta.options.get("benchmark_class") or "")
    if not spec and given is not None:
        return given
    module, _, attr = spec.partition(":")
    try:
        if not attr:
            raise ImportError("the run recorded no benchmark class (module:Class)")
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ResumeError(f"{where}: cannot load benchmark {spec or meta.benchmark!r}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Benchmark)):
        raise ResumeError(f"{where}: {spec} is not an assay Benchmark subclass")
    return cls


def _check_executor(cls: type[Benchmark], opts: RunOptions) -> None:
    """Refuse an unknown executor, or Ray for a benchmark that cannot run remotely, before anything runs."""
    if opts.executor not in ("local", "ray"):
        raise ConfigError(f"--executor {opts.executor!r} (or ASSAY_EXECUTOR): expected local or ray")
    if opts.executor == "ray" and cls.remote_refusal:
        raise ConfigError(
            f"--executor ray: the {cls.name} benchmark cannot run on Ray workers: {cls.remote_refusal}; "
            "run it with --executor local"
        )
    if opts.executor == "ray":
        from assay.exec._ray import check_address

        check_address(opts.ray_address)


def _prepare(benchmark: type[Benchmark] | None, options: dict[str, Any], opts: RunOptions) -> _Run:
    if opts.resume is not None:
        return _prepare_resume(opts, benchmark)
    if benchmark is None:
        raise ConfigError("no benchmark given")
    if not (isinstance(benchmark, type) and issubclass(benchmark, Benchmark)):
        raise ConfigError(
            f"benchmark {benchmark!r}: pass the Benchmark class (assay.evals.get_benchmark(name) finds it by name)"
        )
    cls = benchmark
    _check_executor(cls, opts)
    bench = cls(options)
    if opts.timeout_s is not None and not bench.interruptible:
        raise ConfigError(
            f"--timeout: the {bench.name} benchmark runs its cases as synchronous work a timeout cannot "
            "interrupt; drop --timeout"
        )
    suite_name = opts.suite or cls.default_suite
    suite = bench.load_suite(suite_name)
    if opts.iterations < 1:
        raise ConfigError("--iterations must be at least 1")
    ids = suite.case_ids()
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ConfigError(f"suite {suite.name!r} has a duplicate case id {dup!r}")
    run_dir = new_run_dir(opts.results_dir, bench.name, suite.name, opts.out)
    m = machine()
    meta = RunMeta(
        run_id=run_dir.name,
        benchmark=bench.name,
        suite=suite.name,
        suite_version=suite.version,
        assay_version=__version__,
        git_commit=git_commit(),
        git_dirty=git_dirty(),
        hostname=str(m["hostname"]),
        os=str(m["os"]),
        cpu_count=int(m["cpu_count"]),
        python=str(m["python"]),
        command_line=list(opts.command_line),
        config=bench.subject_config(),
        options={
            "benchmark": bench.options.model_dump(mode="json"),
            "run": opts.recorded(),
            "benchmark_class": f"{cls.__module__}:{cls.__qualname__}",
        },
        seed=opts.seed,
        iterations=opts.iterations,
        case_ids=ids,
        started_at=datetime.now(UTC),
    )
    run = _Run(bench, suite, meta, run_dir, opts)
    write_model(run_dir / META, meta, run.scrubber)
    return run


def rebuild(run_dir: Path) -> tuple[Benchmark, Suite, RunMeta]:
    """A run's benchmark rebuilt from its ``meta.json`` (its recorded class and options), with its suite loaded
    again and checked to hold the run's cases; and the meta."""
    meta = load_meta(run_dir)
    cls = load_benchmark_class(meta, run_dir / META)
    bench = cls(_recorded_options(cls, run_dir / META, meta.options.get("benchmark", {})))
    return bench, _load_suite(run_dir, meta, bench), meta


def _recorded_options(cls: type[Benchmark], meta_path: Path, recorded: Any) -> Any:
    """The run's recorded benchmark options, validated again; a bad one is a ResumeError naming meta.json."""
    from pydantic import ValidationError

    from assay.exec._options import options_error

    try:
        return cls.Options.model_validate(recorded)
    except ValidationError as exc:
        raise ResumeError(f"{meta_path}: options.benchmark: {options_error(exc, cls.Options)}") from None


def _load_suite(run_dir: Path, meta: RunMeta, bench: Benchmark) -> Suite:
    """The run's suite loaded again; refused when its cases are not the run's."""
    suite = bench.load_suite(meta.suite)
    if suite.case_ids() != meta.case_ids:
        added = sorted(set(suite.case_ids()) - set(meta.case_ids))
        removed = sorted(set(meta.case_ids) - set(suite.case_ids()))
        raise ResumeError(
            f"{run_dir}: suite {meta.suite!r} changed since the run started "
            f"(added {added[:5]}, removed {removed[:5]}); start a new run instead of --resume"
        )
    return suite


def _prepare_resume(opts: RunOptions, benchmark: type[Benchmark] | None = None) -> _Run:
    run_dir = Path(opts.resume)  # type: ignore[arg-type]
    meta = load_meta(run_dir)
    recorded = meta.options.get("run", {})
    cls = load_benchmark_class(meta, run_dir / META, benchmark)
    _check_executor(cls, opts)
    bench = cls(_recorded_options(cls, run_dir / META, meta.options.get("benchmark", {})))
    suite = _load_suite(run_dir, meta, bench)
    want = opts.resume_iterations
    extend = want is not None and want != meta.iterations
    if extend and want < meta.iterations:  # type: ignore[operator]
        raise ConfigError(
            f"--iterations {want} with --resume {run_dir}: the run has {meta.iterations} iterations and a resume "
            f"cannot drop measured ones; pass --iterations {meta.iterations} or more, or omit it"
        )
    if extend:
        options = {**meta.options, "run": {**recorded, "iterations": want}}
        meta = meta.model_copy(update={"iterations": want, "options": options})
    opts.iterations = meta.iterations
    opts.seed = meta.seed
    opts.timeout_s = recorded.get("timeout_s", opts.timeout_s)
    run = _Run(bench, suite, meta, run_dir, opts)
    if extend:  # the run now has more iterations: the new ones are pending, the measured ones kept
        write_model(run_dir / META, meta, run.scrubber)
    return run


async def arun_benchmark(
    benchmark: type[Benchmark] | None,
    options: dict[str, Any] | None = None,
    opts: RunOptions | None = None,
) -> RunResult:
    """Run (or resume) a benchmark and write its run directory. See :func:`run_benchmark`."""
    opts = opts or RunOptions()
    with EvalLock(list(opts.command_line)), reporting(opts.progress):
        run = _prepare(benchmark, dict(options or {}), opts)
        journal_path = run.run_dir / JOURNAL
        damaged: list[int] = []
        done = latest_attempts(read_journal(journal_path, damaged))
        if damaged:
            lines = ", ".join(map(str, damaged[:10])) + (" ..." if len(damaged) > 10 else "")
            print(
                f"warning: {journal_path}: skipped {len(damaged)} damaged line(s) ({lines}); "
                "their attempts run again",
                file=sys.stderr,
            )
        specs = run.pending(done)
        stopped_reason: str | None = None
        stopped_code: int | None = None
        t0 = time.monotonic()
        attempt_fn, close_executor = run.attempt, None
        try:
            with Journal(journal_path, run.scrubber) as journal:
                try:
                    with phase(f"{run.meta.run_id}: checking the backend"):
                        await run.bench.preflight()
                        if opts.executor == "ray" and specs:  # an unreachable head is an outage too
                            from assay.exec._remote import ray_attempts

                            attempt_fn, close_executor = ray_attempts(run, opts.ray_address)
                except InfraError as exc:
                    if opts.resume is None:  # nothing measured: leave nothing behind, say what to fix
                        raise InfraError(
                            f"preflight failed: {exc}; nothing was run and no run directory was kept: "
                            "check that the backend is running and reachable, then run the command again"
                        ) from None
                    stopped_reason = f"preflight failed: {exc}"
                    for rec in run.not_run(specs, stopped_reason):
                        journal.append(rec)
                    specs = []
                if specs:
                    try:
                        with phase(f"{run.meta.run_id}: setting up"):  # a server, an index, a model
                            await run.bench.setup(str(run.run_dir))
                        with phase(run.meta.run_id, total=len(specs), unit="attempts", announce=True) as bar:
                            counts: dict[str, int] = {}

                            def on_result(attempt: Attempt) -> None:
                                journal.append(attempt)
                                counts[attempt.status.value] = counts.get(attempt.status.value, 0) + 1
                                bar.advance(note=" ".join(f"{k}={v}" for k, v in sorted(counts.items())))

                            report = await run_local(specs, attempt_fn, on_result, opts.max_concurrency)
                    finally:
                        await run.bench.teardown()
                        if close_executor is not None:
                            close_executor()
                    if report.stopped is not None:
                        outage = report.stopped.exit_code == EXIT_NOT_COMPARABLE
                        what = "backend outage" if outage else "configuration error"
                        stopped_reason = f"{what}: {report.stopped.reason}"
                        stopped_code = report.stopped.exit_code
                        for rec in run.not_run(report.cancelled + report.not_started, stopped_reason):
                            journal.append(rec)
        except asyncio.CancelledError:
            # Ctrl-C (in an attempt, in setup or in a worker's loop): the journal holds every finished
            # attempt; fold them and say how to go on
            finish(
                run.run_dir,
                run.bench,
                run.suite,
                run.meta,
                run.scrubber,
                time.monotonic() - t0,
                stopped="interrupted (Ctrl-C)",
                stopped_code=ExitCode.INTERRUPTED,
            )
            say_stopped(f"interrupted; resume with: {resume_command(run.bench, run.run_dir)}")
            raise
        except (ConfigError, MissingDependencyError, InfraError):
            # a bad flag, file or env var found while setting up, or a backend preflight could not reach: a
            # new run that measured nothing leaves no half-written folder behind (a resumed one is kept)
            if opts.resume is None:
                _discard_unmeasured(run.run_dir)
            raise
        finished = finish(
            run.run_dir,
            run.bench,
            run.suite,
            run.meta,
            run.scrubber,
            time.monotonic() - t0,
            gate=opts.gate,
            stopped=stopped_reason,
            stopped_code=stopped_code or EXIT_NOT_COMPARABLE,
        )
    return RunResult(
        run.run_dir,
        finished.scorecard,
        finished.verdict,
        stopped_reason,
        benchmark=run.bench,
        meta=run.meta,
        attempts=finished.attempts,
    )


def _discard_unmeasured(run_dir: Path) -> None:
    """Remove a new run's folder when its journal holds no attempt.

    The folder was new or empty when the run began (``new_run_dir``), so all it holds was written by this run.
    """
    if read_journal(run_dir / JOURNAL):
        return
    shutil.rmtree(run_dir, ignore_errors=True)


@dataclass(frozen=True)
class Finished:
    """A folded run: its scorecard, the verdict ``gate.hold`` gave it, and the attempts folded."""

    scorecard: Scorecard
    verdict: Verdict
    attempts: list[Attempt]


def finish(
    run_dir: Path,
    bench: Benchmark,
    suite: Suite,
    meta: RunMeta,
    scrubber: Scrubber,
    elapsed_s: float | None = None,
    *,
    gate: GateOptions | None = None,
    stopped: str | None = None,
    stopped_code: int = EXIT_NOT_COMPARABLE,
) -> Finished:
    """Fold the journal into ``scorecard.json``, hold it to ``gate`` once, then write the reports once.

    ``gate.hold`` decides the verdict (comparison, expectations, completeness, exit code) before the reports
    are written, so ``report.md`` and ``report.html`` carry it. With ``elapsed_s`` (the seconds this session
    ran) ``meta.json`` records when the run finished and, summed over the run and its resumes, how long it ran.
    """
    from assay.report import write_reports
    from assay.stats import fold

    if elapsed_s is not None:
        meta.finished_at = datetime.now(UTC)
        meta.elapsed_s = round((meta.elapsed_s or 0.0) + elapsed_s, 3)
        write_model(run_dir / META, meta, scrubber)

    attempts = read_journal(run_dir / JOURNAL)
    final = list(latest_attempts(attempts).values())
    scorecard = fold(
        attempts,
        meta,
        categories={c.id: c.category for c in suite.cases},
        metric_specs=bench.metric_specs,
        run_metrics=bench.run_metrics(final),
        extra=bench.scorecard_extra(final),
    )
    write_model(run_dir / SCORECARD, scorecard, scrubber)
    try:
        verdict = hold(
            scorecard,
            gate or GateOptions(),
            meta=meta,
            run_dir=run_dir,
            attempts=final,
            stopped=stopped,
            stopped_code=stopped_code,
            scrubber=scrubber,
        )
    except Exception:  # a baseline or expectations file gone since the run began: still report the run
        write_reports(run_dir, scorecard, bench, scrubber, attempts=final)
        raise
    write_reports(run_dir, scorecard, bench, scrubber, verdict=verdict, attempts=final)
    return Finished(scorecard, verdict, final)


def refold(run_dir: Path, benchmark: Benchmark | None = None, *, suite: Suite | None = None) -> Scorecard:
    """Fold a finished run's journal into its scorecard and reports again, after ``benchmark.regrade`` re-grades
    its recorded attempts (the attempts it returns in place of the recorded ones are appended to the journal).

    ``benchmark``: the run's benchmark, holding what its re-grade needs (None: rebuilt from ``meta.json``);
    ``suite``: the suite it already loaded (None: loaded here).
    """
    run_dir = Path(run_dir)
    if benchmark is None:
        benchmark, suite, meta = rebuild(run_dir)
    else:
        meta = load_meta(run_dir)
        suite = _load_suite(run_dir, meta, benchmark) if suite is None else suite
    scrubber = Scrubber(extra_values=benchmark.secret_values())
    recorded = list(latest_attempts(read_journal(run_dir / JOURNAL)).values())
    regraded = benchmark.regrade(list(recorded))
    replaced = [new for new, old in zip(regraded, recorded, strict=True) if new is not old]
    if replaced:
        with Journal(run_dir / JOURNAL, scrubber) as journal:
            for attempt in replaced:
                journal.append(attempt)
    # held to nothing: a re-graded run's earlier comparison no longer describes it
    return finish(run_dir, benchmark, suite, meta, scrubber).scorecard


def run_benchmark(
    benchmark: type[Benchmark] | None,
    options: dict[str, Any] | None = None,
    opts: RunOptions | None = None,
) -> RunResult:
    """Run a benchmark class, or resume ``opts.resume``; returns the run directory and scorecard.

    Exit code 3 means the run stopped on an infrastructure outage (the rest is NOT_RUN; resume it later).
    """
    return run_interruptible(arun_benchmark(benchmark, options, opts))
