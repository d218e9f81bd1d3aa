"""One run while it executes: its options, and how one attempt becomes a record (statuses, timeouts,
outages and configuration errors are decided here, on this machine or on a Ray worker)."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay._util import Scrubber
from assay.errors import ConfigError, InfraError, MissingDependencyError
from assay.exec._benchmark import AttemptContext, Benchmark, Case, Suite
from assay.exec._local import AttemptSpec, RunStopped
from assay.gate import GateOptions
from assay.runs import FINAL_STATUSES, Attempt, ErrorInfo, RunMeta, Status
from assay.runs.provenance import git_commit


@dataclass
class RunOptions:
    """Options every benchmark shares."""

    suite: str | None = None
    iterations: int = 1
    max_concurrency: int = 4
    timeout_s: float | None = None
    out: Path | None = None
    results_dir: Path = Path("results")
    seed: int = 0
    resume: Path | None = None
    #: with ``resume``: the iterations asked for (None: the run's own); more extends the run, fewer is refused
    resume_iterations: int | None = None
    command_line: list[str] = field(default_factory=lambda: list(sys.argv))
    #: report progress on stderr: a bar on a terminal, plain lines otherwise (see ``assay._util._progress``)
    progress: bool = False
    #: where attempts run: ``local`` (an asyncio pool here) or ``ray`` (tasks on the cluster at ``ray_address``)
    executor: str = "local"
    ray_address: str = "auto"
    #: what the finished run is held to (--compare, --expect, ...): ``gate.hold`` decides its verdict
    gate: GateOptions = field(default_factory=GateOptions)

    def recorded(self) -> dict[str, Any]:
        return {"iterations": self.iterations, "timeout_s": self.timeout_s, "seed": self.seed}


class _Run:
    """State of one run while it executes."""

    def __init__(
        self, bench: Benchmark, suite: Suite, meta: RunMeta, run_dir: Path, opts: RunOptions
    ) -> None:
        self.bench, self.suite, self.meta, self.run_dir, self.opts = bench, suite, meta, run_dir, opts
        # the secrets the suite itself plants (a scenario's fake key) are kept out of every artifact too
        self.scrubber = Scrubber(extra_values=bench.secret_values())
        self.commit = git_commit()

    def pending(self, done: dict[tuple[str, int], Attempt]) -> list[AttemptSpec]:
        specs = []
        for idx, case in enumerate(self.suite.cases):
            for it in range(self.meta.iterations):
                prev = done.get((case.id, it))
                if prev is None or prev.status not in FINAL_STATUSES:
                    specs.append(AttemptSpec(idx, case.id, it))
        return specs

    def _record(self, case: Case, spec: AttemptSpec, started: datetime, t0: float, **fields: Any) -> Attempt:
        return Attempt(
            case_id=case.id,
            iteration=spec.iteration,
            category=case.category,
            started_at=started,
            elapsed_s=time.perf_counter() - t0,
            commit=self.commit,
            **fields,
        )

    async def attempt(self, spec: AttemptSpec) -> Attempt:
        case = self.suite.cases[spec.case_index]
        ctx = AttemptContext(
            run_dir=str(self.run_dir),
            iteration=spec.iteration,
            seed=self.meta.seed,
            timeout_s=self.opts.timeout_s,
        )
        timeout = self.opts.timeout_s
        try:
            async with asyncio.timeout(timeout) as deadline:
                if timeout is not None:  # the deadline counts from when the work starts, not the queue
                    loop = asyncio.get_running_loop()
                    ctx.on_deadline = lambda s: deadline.reschedule(None if s is None else loop.time() + s)
                outcome = await self.bench.run_case(case, ctx)
        except InfraError as exc:
            rec = self._record(
                case,
                spec,
                ctx.started_at,
                ctx.t0,
                status=Status.INFRA_ERROR,
                error=ErrorInfo(type=type(exc).__name__, message=str(exc)),
                **_spent_so_far(ctx),
            )
            raise RunStopped(rec, str(exc)) from exc
        except (ConfigError, MissingDependencyError) as exc:
            # the user's configuration, not the subject: stop, keep what was measured, count nothing as failed
            rec = self._record(
                case,
                spec,
                ctx.started_at,
                ctx.t0,
                status=Status.NOT_RUN,
                skip_reason=f"configuration error: {exc}",
                error=ErrorInfo(type=type(exc).__name__, message=str(exc)),
            )
            raise RunStopped(rec, str(exc), exit_code=exc.exit_code) from exc
        except TimeoutError as exc:
            if deadline.expired():
                return self._record(
                    case,
                    spec,
                    ctx.started_at,
                    ctx.t0,
                    status=Status.TIMEOUT,
                    error=ErrorInfo(type="Timeout", message=f"no result after {self.opts.timeout_s}s"),
                    **_spent_so_far(ctx),
                )
            return self._error(case, spec, ctx.started_at, ctx.t0, exc)
        except Exception as exc:  # the subject broke: recorded, never raised out of the run
            return self._error(case, spec, ctx.started_at, ctx.t0, exc)
        return self._record(
            case,
            spec,
            ctx.started_at,
            ctx.t0,
            status=outcome.status,
            score=outcome.score,
            metrics=outcome.metrics,
            details=outcome.details,
            usage=outcome.usage,
            error=outcome.error,
            skip_reason=outcome.skip_reason,
            broken_by=outcome.broken_by,
        )

    def _error(
        self, case: Case, spec: AttemptSpec, started: datetime, t0: float, exc: BaseException
    ) -> Attempt:
        return self._record(
            case,
            spec,
            started,
            t0,
            status=Status.ERROR,
            error=ErrorInfo(type=type(exc).__name__, message=str(exc)[:2000]),
        )

    def not_run(self, specs: list[AttemptSpec], reason: str) -> list[Attempt]:
        now = datetime.now(UTC)
        return [
            Attempt(
                case_id=s.case_id,
                iteration=s.iteration,
                category=self.suite.cases[s.case_index].category,
                status=Status.NOT_RUN,
                started_at=now,
                commit=self.commit,
                skip_reason=reason,
            )
            for s in specs
        ]


def _spent_so_far(ctx: AttemptContext) -> dict[str, Any]:
    """An attempt cut short keeps what the benchmark said it had spent and done so far, marked partial."""
    details = {**ctx.partial_details, "partial": True}
    if ctx.spent is None:
        details["spend_missing"] = True
    return {"usage": ctx.spent, "details": details}
