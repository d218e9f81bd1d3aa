"""The contract a benchmark keeps to plug into assay's runner, stats, gate and report.

A benchmark owns what is particular to it (its suite, how one case is attempted, its extra metrics and
report section); everything else (run directory, journal, resume, lock, executor, folding, gating,
rendering) is shared.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from assay.exec._options import BenchmarkOptions, validate_options
from assay.runs import Attempt, ErrorInfo, MetricSpec, MetricValue, Scorecard, Status, SubjectConfig, Usage

if TYPE_CHECKING:
    from assay.gate import MoveAdvisor
    from assay.report import Plot


@dataclass
class Case:
    """One thing to measure. ``input`` must be JSON-serialisable so attempts can run elsewhere (Ray)."""

    id: str
    category: str = "default"
    input: Any = None
    tags: list[str] = field(default_factory=list)


@dataclass
class Suite:
    name: str
    version: str
    cases: list[Case]

    def case_ids(self) -> list[str]:
        return [c.id for c in self.cases]


@dataclass
class AttemptResources:
    """What one attempt asks of a Ray worker (``--executor ray``): CPUs, memory, custom resources."""

    cpus: float = 1.0
    memory_mb: int | None = None
    #: custom resources the cluster's nodes declare (``ray start --resources '{"sandbox": 4}'``)
    custom: dict[str, float] = field(default_factory=dict)


@dataclass
class Outcome:
    """What ``run_case`` returns; the runner adds timing, commit and iteration."""

    status: Status
    score: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    usage: Usage | None = None
    error: ErrorInfo | None = None
    skip_reason: str | None = None
    #: an ERROR run (or a FAIL a code check decided first): what broke, the harness or the agent
    broken_by: Literal["harness", "agent"] | None = None

    @classmethod
    def skipped(cls, reason: str, **details: Any) -> Outcome:
        return cls(status=Status.SKIPPED, skip_reason=reason, details=dict(details))


@dataclass
class AttemptContext:
    """Per-attempt information handed to ``run_case``, and the attempt's clock.

    ``started_at``/``t0`` are when the attempt's work began. A benchmark whose cases take turns on a lock of
    its own enters it with :meth:`exclusive` (or calls :meth:`work_started` once it holds it), so the
    attempt's elapsed time and ``--timeout`` count the work, not the wait for the other cases.
    """

    run_dir: str
    iteration: int
    seed: int
    timeout_s: float | None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    t0: float = field(default_factory=time.perf_counter)
    #: set by the runner: sets the attempt's --timeout deadline that many seconds from now (None: none)
    on_deadline: Callable[[float | None], None] | None = None
    #: what the attempt has spent so far, kept up to date by a benchmark whose cases call models: the runner
    #: records it on an attempt that times out or stops on an outage (None there: the spend is missing)
    spent: Usage | None = None
    #: details so far (the conversation up to the cut), recorded on such an attempt in the same way
    partial_details: dict[str, Any] = field(default_factory=dict)

    def work_started(self) -> None:
        """Restart the attempt's clock (and its --timeout deadline): the work begins now."""
        self.started_at, self.t0 = datetime.now(UTC), time.perf_counter()
        if self.on_deadline is not None:
            self.on_deadline(self.timeout_s)

    @asynccontextmanager
    async def exclusive(self, lock: asyncio.Lock) -> AsyncIterator[None]:
        """``async with lock``, with no deadline while waiting and the attempt's clock started once it is held."""
        if self.on_deadline is not None:
            self.on_deadline(None)
        async with lock:
            self.work_started()
            yield


class Benchmark(ABC):
    """Base class of every benchmark. Subclasses are registered by ``name``."""

    name: ClassVar[str]
    help: ClassVar[str] = ""
    suites: ClassVar[tuple[str, ...]] = ("pr",)
    default_suite: ClassVar[str] = "pr"
    #: metrics this benchmark reports; direction and tolerance are declared once here
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = ()
    #: whether attempts pass/fail (agent-like) or only carry metrics (retrieval, serving)
    pass_fail: ClassVar[bool] = True
    #: whether ``--timeout`` can stop an attempt: its work awaits often, or runs stoppably
    #: (``assay.exec._stop``); a benchmark doing long synchronous work in the event loop says False and
    #: ``--timeout`` is refused for it rather than ignored
    interruptible: ClassVar[bool] = True
    #: why attempts cannot run on Ray workers (None: they can); ``--executor ray`` is refused with it
    remote_refusal: ClassVar[str | None] = None
    #: suite -> what its numbers mean where they are easily misread (a self-test with no agent under test);
    #: ``assay eval <name>`` says it before the run and under the summary
    suite_notes: ClassVar[Mapping[str, str]] = {}

    # -- what the one registry (``assay.evals.available``/``get_benchmark``) tells cli, view and ci --------
    #: one line for ``assay eval --help`` (default: the first line of ``help``)
    short_help: ClassVar[str] = ""
    #: subcommands of ``assay eval <name>``: name -> ``module:attr`` of a click command (the bare command still
    #: runs the benchmark)
    subcommands: ClassVar[Mapping[str, str]] = {}
    #: ``module:attr`` of a click command that replaces the generated ``assay eval <name>`` (None: generated)
    command: ClassVar[str | None] = None
    #: ``module:attr`` of ``(run, attempt) -> html`` drawing one attempt on a case page of ``assay view`` (None:
    #: its details as JSON)
    case_view: ClassVar[str | None] = None
    #: the benchmark's CI jobs (``assay ci plan``, ``ci verify``): job name -> CI tier -> ``{"args": [...],
    #: "reason": "...", "baseline": "tests/fixtures/baselines/..."}`` (baseline optional). pr: the offline suite,
    #: gated against a committed baseline; smoke: a quick pass against a real model on an RC tag; full: the whole
    #: benchmark, the sweep ``ci verify`` requires before a final tag; backlog: the weekly run of what is known to
    #: fail. ``args`` are those of ``assay eval <name>``; the plan adds --results-dir, --junit, --summary, --compare
    ci_jobs: ClassVar[Mapping[str, Mapping[str, Mapping[str, Any]]]] = {}

    #: the benchmark's own options (``evals/<name>/_options.py``): the CLI's flags are generated from it
    #: (not annotated: the contract's annotated attributes are what a wrapper forwards; its options are its own)
    Options = BenchmarkOptions

    def __init__(self, options: BenchmarkOptions | Mapping[str, Any] | None = None) -> None:
        #: the validated options (a mapping is validated; a wrong value is a ConfigError naming its flag)
        self.options: Any = validate_options(self.Options, options)

    @classmethod
    def move_advisor(cls) -> MoveAdvisor | None:
        """The benchmark's CI tiers for ``assay health``'s move suggestions (None: it has none)."""
        return None

    def attempt_resources(self) -> AttemptResources:
        """What each attempt asks of a Ray worker: one CPU, and a ``sandbox`` when the agent runs fenced."""
        return AttemptResources(custom={"sandbox": 1.0} if getattr(self.options, "fence", False) else {})

    def subject_config(self) -> SubjectConfig:
        """What makes two runs comparable (subject, model, judge model, embedder)."""
        return SubjectConfig()

    @abstractmethod
    def load_suite(self, suite: str) -> Suite:
        """Load and validate the suite; raise ConfigError naming the file/line on bad input."""

    async def preflight(self) -> None:  # noqa: B027 - optional hook
        """One cheap check that every backend is reachable; raise InfraError or ConfigError."""

    async def setup(self, run_dir: str) -> None:  # noqa: B027 - optional hook
        """Start what the attempts need (a server, an index)."""

    async def teardown(self) -> None:  # noqa: B027 - optional hook
        """Stop what setup started. Always called."""

    @abstractmethod
    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        """Attempt one case. Raise InfraError for an outage; other exceptions are recorded as ERROR."""

    def regrade(self, attempts: list[Attempt]) -> list[Attempt]:
        """The recorded attempts (the latest of each case and iteration) graded again before a re-fold
        (``assay.exec.refold``): a judge step or a later grader returns new records in place of the ones it
        re-grades, the same object for the others. By default nothing changes."""
        return attempts

    def run_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        """Run-level metrics beyond the per-case means the shared fold computes (e.g. throughput)."""
        return {}

    def secret_values(self) -> list[str]:
        """Secret values the loaded suite plants for the subject to find (and must not echo): the run scrubs
        them from every artifact like the environment's own secrets. Called after :meth:`load_suite`."""
        return []

    def scorecard_extra(self, attempts: list[Attempt]) -> dict[str, Any]:
        """Benchmark facts the scorecard carries in ``extra`` (a targeted run's ``selection``, ...)."""
        return {}

    def report_section(self, scorecard: Scorecard) -> str:
        """Markdown appended to the shared report."""
        return ""

    def failure_reason(self, attempt: Attempt) -> str:
        """Why ``attempt`` did not pass, in this benchmark's own terms, from its ``details`` (one line).

        The shared report shows it for every case that failed, errored or was not measured. Override it
        and fall back to ``super().failure_reason(attempt)`` for what the details do not explain.
        """
        return attempt_error_text(attempt)

    def report_plots(self, scorecard: Scorecard, attempts: list[Attempt], run_dir: Path) -> list[Plot]:
        """Plots a person would look at for this benchmark (the latest attempt of each case and iteration).

        The shared report adds the per-category pass rate, saves each PNG in the run directory, links it
        from ``report.md`` and inlines it in ``report.html``.
        """
        return []


def attempt_error_text(attempt: Attempt) -> str:
    """The error, skip reason or status of an attempt, for attempts whose details say nothing more."""
    if attempt.error is not None:
        return f"{attempt.error.type}: {attempt.error.message}"
    if attempt.skip_reason:
        return attempt.skip_reason
    return {
        Status.TIMEOUT: "timed out",
        Status.NOT_RUN: "not run",
        Status.FAIL: "failed (the benchmark recorded no reason)",
    }.get(attempt.status, "")
