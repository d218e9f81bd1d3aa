"""``assay eval benchmark``: serving speed (and answer accuracy) of an OpenAI-compatible server.

One case is one load level. Levels run one at a time (whatever ``--max-concurrency`` says): overlapping
levels would measure each other. Every request's timings go to ``results.json`` in the run directory.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assay._util import phase
from assay.errors import ConfigError, InfraError
from assay.evals._suite_id import suite_version
from assay.evals.serving._ci import CI_JOBS
from assay.evals.serving._client import StreamClient
from assay.evals.serving._levels import (
    build_levels,
    check_workload_flags,
    level_verdict,
    max_error_rate,
    saturated,
    sustained_rates,
    sweep_rate,
)
from assay.evals.serving._load import LoadLevel, run_level
from assay.evals.serving._metrics import LATENCIES, STATS, level_figures, parse_slo
from assay.evals.serving._options import WORKLOADS, ServingOptions
from assay.evals.serving._report import failure_reason, render_section, serving_plots
from assay.evals.serving._results import LevelResult, read_level, write_level
from assay.evals.serving._target import (
    CtxReading,
    Target,
    api_key,
    check_context,
    parse_model_spec,
    read_context_size,
    token_counter,
)
from assay.evals.serving._triage import FIELDS
from assay.evals.serving._workloads import (
    DatasetWorkload,
    EmailTriage,
    LengthSpec,
    SyntheticWorkload,
    Workload,
    per_category_accuracy,
)
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite, validate_options
from assay.runs import Attempt, ErrorInfo, MetricSpec, MetricValue, Scorecard, Status, SubjectConfig, Usage

if TYPE_CHECKING:
    from assay.models.server_tokens import ServerTokenizer
    from assay.report import Plot

__all__ = ["ServingBenchmark"]

#: relative change treated as noise when no spread was measured
_REL_TOL = {"latency": 0.10, "throughput": 0.10, "accuracy": 0.05}
_GATED = {
    "ttft_median_ms",
    "tpot_median_ms",
    "e2e_median_ms",
    "itl_median_ms",
    "request_throughput",
    "output_throughput",
    "accuracy_all",
}


def _specs() -> tuple[MetricSpec, ...]:
    # latencies and throughputs are continuous (their tolerance is relative: 10% of the baseline at
    # least); accuracies and rates are proportions over the emails; errors and timeouts are counts
    lat = _REL_TOL["latency"]
    specs = [
        MetricSpec(
            name=f"{fam}_{stat}_ms",
            kind="continuous",
            direction="lower",
            unit="ms",
            tolerance=lat,
            gated=f"{fam}_{stat}_ms" in _GATED,
        )
        for fam in LATENCIES
        for stat in STATS
    ]
    thr = _REL_TOL["throughput"]
    specs += [
        MetricSpec(name="request_throughput", kind="continuous", unit="req/s", tolerance=thr, gated=True),
        MetricSpec(name="output_throughput", kind="continuous", unit="tok/s", tolerance=thr, gated=True),
        MetricSpec(
            name="total_token_throughput", kind="continuous", unit="tok/s", tolerance=thr, gated=False
        ),
        MetricSpec(name="peak_output_throughput", kind="continuous", unit="tok/s", gated=False),
        MetricSpec(name="goodput", kind="continuous", unit="req/s", tolerance=thr, gated=False),
        MetricSpec(name="errors", kind="count", direction="lower", gated=False),
        MetricSpec(name="timeouts", kind="count", direction="lower", gated=False),
        # shares of a level's requests that errored / timed out (a level above --max-error-rate FAILs)
        MetricSpec(name="error_rate", kind="proportion", direction="lower", gated=True),
        MetricSpec(name="timeout_rate", kind="proportion", direction="lower", gated=True),
    ]
    acc = _REL_TOL["accuracy"]
    specs += [
        MetricSpec(name=f"accuracy_{k}", kind="proportion", tolerance=acc, gated=k == "all")
        for k in ("category", "urgent", "personal", "all")
    ]
    specs.append(MetricSpec(name="answer_parse_rate", kind="proportion", gated=False))
    specs += [MetricSpec(name=f"parse_rate_{k}", kind="proportion", gated=False) for k in FIELDS]
    specs.append(MetricSpec(name="answer_mode_share", kind="proportion", direction="lower", gated=False))
    # what always answering the mailbox's majority label would score on the same emails (not the subject's)
    specs += [MetricSpec(name=f"baseline_{k}", kind="proportion", gated=False) for k in (*FIELDS, "all")]
    return tuple(specs)


class ServingBenchmark(Benchmark):
    """Serving speed: TTFT, TPOT, ITL, E2E percentiles, throughput and goodput per load level."""

    short_help = "Serving speed: TTFT, TPOT, ITL, latency percentiles, throughput, goodput."
    case_view = "assay.view._case:serving_view"
    ci_jobs = CI_JOBS

    name: ClassVar[str] = "benchmark"
    help: ClassVar[str] = (
        "Serving speed of an OpenAI-compatible server or the embedded model: TTFT, TPOT, ITL, E2E, "
        "throughput and goodput per load level; email-triage accuracy."
    )
    suites: ClassVar[tuple[str, ...]] = WORKLOADS
    default_suite: ClassVar[str] = "email-triage"
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = _specs()
    pass_fail: ClassVar[bool] = False
    remote_refusal: ClassVar[str | None] = (
        "it times one model server from this machine, and its load levels on several workers at once would "
        "load the server together and time each other"
    )

    Options = ServingOptions
    options: ServingOptions

    def __init__(self, options: ServingOptions | dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.target: Target = parse_model_spec(self.options.model)
        self.slo = parse_slo(self.options.slo)
        self.max_error_rate = max_error_rate(self.options)
        ctx = self.options.ctx_size
        if ctx is not None and ctx < 1:
            raise ConfigError("--ctx-size must be positive")
        self.workload: Workload | None = None
        self.levels: dict[str, LoadLevel] = {}
        self.run_dir: Path | None = None
        self.ctx: CtxReading | None = None
        self._server: Any = None
        self._client: StreamClient | None = None
        self._counter: ServerTokenizer | None = None
        self._lock: asyncio.Lock | None = None
        self._sweep: dict[int, dict[str, float]] = {}
        self._saturated: dict[int, str] = {}
        #: why each level that did not pass did not (its failed requests, error, skip or not-run reason)
        self._reasons: dict[str, str] = {}

    @classmethod
    def describe(cls, given: ServingOptions | Mapping[str, Any]) -> str:
        options = validate_options(ServingOptions, given)
        levels = build_levels(options, None)
        return "\n".join(f"{lv.name}\t{lv.describe() or 'sweep rate, set at run time'}" for lv in levels)

    def subject_config(self) -> SubjectConfig:
        extra: dict[str, Any] = {"endpoint": self.options.endpoint}
        if self.options.ctx_size is not None:
            extra["ctx_size"] = self.options.ctx_size
        if self.options.structured:
            extra["structured"] = "json_object+schema"
        return SubjectConfig(subject="serving", model=self.target.label, extra=extra)

    # -- suite -----------------------------------------------------------------------------------------
    def _make_workload(self, suite: str) -> tuple[str, Workload]:
        opts = self.options
        name = opts.workload or ("dataset" if opts.dataset else suite)
        if name not in WORKLOADS:
            raise ConfigError(f"--suite {name!r}: choose one of {', '.join(WORKLOADS)}")
        max_tokens = opts.max_tokens
        if max_tokens is not None and max_tokens < 1:
            raise ConfigError("--max-tokens must be positive")
        endpoint = opts.endpoint
        check_workload_flags(name, opts)
        structured = opts.structured
        if structured and name != "email-triage":
            raise ConfigError(f"--structured applies to the email-triage workload only, not {name}")
        if name == "email-triage":
            return name, EmailTriage(
                opts.mbox,
                opts.prompt_file,
                max_tokens,
                structured=structured,
            )
        if name == "synthetic":
            inp = LengthSpec.parse(opts.input_len or "256", "--input-len")
            out = LengthSpec.parse(opts.output_len or "128", "--output-len")
            return name, SyntheticWorkload(inp, out, seed=0, endpoint=endpoint)
        if not opts.dataset:
            raise ConfigError("--suite dataset needs --dataset FILE")
        return name, DatasetWorkload(opts.dataset, max_tokens or 128, endpoint=endpoint)

    def load_suite(self, suite: str) -> Suite:
        name, self.workload = self._make_workload(suite)
        levels = build_levels(self.options, self.workload.natural_size())
        self.levels = {lv.name: lv for lv in levels}
        category = "sweep" if self.options.sweep else ("rate" if self.options.request_rate else "concurrency")
        cases = [Case(id=lv.name, category=category, input=lv.to_json()) for lv in levels]
        label = name + ("+json-schema" if getattr(self.workload, "structured", False) else "")
        content = {"workload": self.workload.version}
        return Suite(name=name, version=suite_version(label, cases, extra=content), cases=cases)

    # -- lifecycle -------------------------------------------------------------------------------------
    async def preflight(self) -> None:
        if self.target.embedded:
            from assay.models import embedded_gguf_path

            embedded_gguf_path()  # raises MissingDependencyError naming the extra
            return
        client = StreamClient(self.target.base_url or "", api_key=api_key())
        try:
            status, body = await client.get_json("/v1/models")
            if status is None:
                raise InfraError(f"--model {self.target.spec}: server unreachable: {body}")
            if status in (401, 403):
                raise InfraError(
                    f"--model {self.target.spec}: the server refused our credentials (HTTP {status})"
                )
        finally:
            await client.aclose()

    async def setup(self, run_dir: str) -> None:
        self.run_dir = Path(run_dir)
        self._lock = asyncio.Lock()
        expected = self.options.ctx_size
        base_url = self.target.base_url
        if self.target.embedded:
            from assay.models import LlamaServer

            self._server = LlamaServer(ctx_size=expected or 2048)  # it queues concurrent requests
            with phase("starting the embedded model server"):
                await self._server.astart()
            base_url = self._server.base_url
            expected = self._server.ctx_size
            self.target = dataclasses.replace(self.target, model=self._server.model)
        self._client = StreamClient(base_url or "", api_key=None if self.target.embedded else api_key())
        self._counter = token_counter(self._client, self.target.model)
        self.ctx = await read_context_size(self._client, self.target.model, expected)
        check_context(self.ctx, expected)

    async def teardown(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._server is not None:
            await asyncio.to_thread(self._server.stop)
            self._server = None

    # -- one load level --------------------------------------------------------------------------------
    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        if self._lock is None or self._client is None or self.workload is None:
            raise RuntimeError("setup() was not run")
        async with ctx.exclusive(self._lock):  # levels take turns; each is timed from its turn
            return await self._run_level(case, ctx)

    def _sweep_level(self, level: LoadLevel, it: int) -> LoadLevel | Outcome:
        if it in self._saturated:
            return Outcome.skipped(self._saturated[it])
        ends = self._sweep.get(it, {})
        for end in ("sync", "max"):
            if end not in ends and self.run_dir is not None:
                prev = read_level(self.run_dir, end, it)
                if prev is not None and prev.figures.get("request_throughput"):
                    ends[end] = float(prev.figures["request_throughput"])
        if "sync" not in ends or "max" not in ends:
            raise RuntimeError(
                "a sweep rate level needs the sync and max levels of its iteration measured first"
            )
        steps = self.options.sweep_steps
        rate = sweep_rate(int(level.name.rsplit("-", 1)[1]), steps, ends["sync"], ends["max"])
        if rate is None:
            return Outcome.skipped(
                f"max throughput ({ends['max']:.3g} req/s) is not clearly above synchronous "
                f"({ends['sync']:.3g} req/s): the server answers one request at a time, no rates in between"
            )
        return dataclasses.replace(level, rate=rate)

    async def _run_level(self, case: Case, ctx: AttemptContext) -> Outcome:
        assert self._client is not None and self.workload is not None
        self.run_dir = Path(ctx.run_dir)
        level = self.levels[case.id]
        if level.name.startswith("sweep-"):
            got = self._sweep_level(level, ctx.iteration)
            if isinstance(got, Outcome):
                return got
            level = got
        run = await run_level(
            self._client,
            self.target.model,
            self.workload,
            level,
            seed=ctx.seed + 1000 * ctx.iteration,
            request_timeout=self.options.request_timeout,
            counter=self._counter,
        )
        measured = [t for t in run.timings if not t.warmup]
        crashed = self._server.crash_report() if self._server is not None else None
        if (
            crashed is not None
        ):  # the requests that failed met a dead server: an outage, not the level's result
            raise InfraError(f"the embedded model crashed during level {level.name}: {crashed}")
        if measured and all(not t.ok for t in measured):
            errors = [t.error or "" for t in measured]
            if all(e.startswith(("connect failed", "connection lost")) for e in errors):
                raise InfraError(f"server unreachable during level {level.name}: {errors[0]}")
        figures = level_figures(run.timings, self.slo)
        scored = [t.extra for t in measured if t.ok]
        extra_metrics = self.workload.level_metrics(scored)
        metrics = {**figures.flat(), **extra_metrics}
        if level.rate is not None and not math.isinf(level.rate):
            metrics["offered_rate"] = level.rate
        result = LevelResult(
            case_id=case.id,
            iteration=ctx.iteration,
            level=level.to_json(),
            figures=figures.to_json(),
            workload_metrics=extra_metrics,
            target=self._target_info(),
            per_category=per_category_accuracy(scored) if isinstance(self.workload, EmailTriage) else {},
            workload=self._workload_info(),
            requests=[t.to_json() for t in run.timings],
        )
        write_level(self.run_dir, result)
        if level.name in ("sync", "max") and figures.request_throughput:
            self._sweep.setdefault(ctx.iteration, {})[level.name] = figures.request_throughput
        rates = (
            sustained_rates(run.timings) if level.rate is not None and not math.isinf(level.rate) else None
        )
        if rates is not None:
            metrics["offered_rate_realized"], metrics["served_rate"] = rates
            if level.name.startswith("sweep-") and saturated(*rates):
                self._saturated[ctx.iteration] = (
                    f"server saturated at {level.name} ({rates[0]:.3g} req/s offered, {rates[1]:.3g} req/s served)"
                )
        details: dict[str, Any] = {
            "level": level.to_json(),
            "target": self._target_info(),
            "token_sources": figures.token_sources,
            "run_dir": str(self.run_dir),
        }
        failed = [t for t in measured if not t.ok]
        if failed:  # what the report quotes: the first failed requests, as the client recorded them
            details.update(
                requests_measured=len(measured),
                requests_failed=len(failed),
                failed_requests=[
                    {"index": t.index, "error": (t.error or "")[:300] or None, "timed_out": t.timed_out}
                    for t in failed[:3]
                ],
            )
        if result.per_category:
            details["per_category"] = result.per_category
        if isinstance(self.workload, EmailTriage):
            details["structured"] = self.workload.structured
            details["majority_labels"] = self.workload.majority
        if figures.completed == 0:
            first = next((t.error for t in measured if t.error), "no request completed")
            return Outcome(
                status=Status.ERROR,
                metrics=metrics,
                details=details,
                error=ErrorInfo(type="AllRequestsFailed", message=str(first)[:500]),
            )
        score = None
        if extra_metrics:
            score = sum(extra_metrics[f"accuracy_{k}"] for k in ("category", "urgent", "personal")) / 3
        # tokens the measured requests used; local servers have no price, so the cost stays unknown
        usage = Usage(
            input_tokens=figures.input_tokens, output_tokens=figures.output_tokens, calls=figures.requests
        )
        status, rates, why = level_verdict(figures, self.max_error_rate)
        metrics.update(rates)
        details["pass_rule"] = f"errors + timeouts at most {self.max_error_rate:.1%} of requests"
        if why is not None:
            details["failure"] = why
        return Outcome(status=status, score=score, metrics=metrics, details=details, usage=usage)

    def _workload_info(self) -> dict[str, Any]:
        work = self.workload
        info: dict[str, Any] = {
            "name": getattr(work, "name", None),
            "version": getattr(work, "version", None),
        }
        if isinstance(work, EmailTriage):
            info.update(
                structured=work.structured,
                response_format=work.item(0).body.get("response_format"),
                max_tokens=work.max_tokens,
                majority_labels=work.majority,
            )
        return info

    def _target_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "model": self.target.label,
            "embedded": self.target.embedded,
            "ctx_size_requested": self.options.ctx_size,
        }
        if self._server is not None:
            info.update(
                ctx_size_requested=self._server.ctx_size,
                base_url=self._server.base_url,
                server_args=["--interrupt_requests", "False"],
            )
        if self.ctx is not None:
            info.update(ctx_size=self.ctx.n_ctx, ctx_source=self.ctx.source, server_kind=self.ctx.server_kind)
        return info

    # -- run level ------------------------------------------------------------------------------------
    def run_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        """Gated metrics again, one value per iteration (the mean over its load levels).

        Latencies and throughputs carry the per-iteration values as samples (the gate's relative tolerance
        comes from their spread, and at least the declared 10%); ``accuracy_all`` is a proportion over the
        emails one iteration graded (repeats of the same emails are not more items).
        """
        for a in attempts:
            if a.details.get("run_dir"):
                self.run_dir = Path(a.details["run_dir"])
        self._reasons = {a.case_id: self.failure_reason(a) for a in attempts if a.status is not Status.PASS}
        ok = [a for a in attempts if a.status in (Status.PASS, Status.FAIL)]  # FAIL: too many errors
        specs = {s.name: s for s in self.metric_specs}
        out: dict[str, MetricValue] = {}
        for name in sorted(_GATED):
            per_iter: dict[int, list[float]] = {}
            for a in ok:
                if name in a.metrics:
                    per_iter.setdefault(a.iteration, []).append(a.metrics[name])
            if not per_iter:
                continue
            means = [sum(v) / len(v) for v in per_iter.values()]
            value = sum(means) / len(means)
            spec = specs[name]
            n = len(means)
            if spec.kind == "proportion":
                graded: dict[int, float] = {}
                for a in ok:
                    if name in a.metrics:
                        graded[a.iteration] = graded.get(a.iteration, 0.0) + a.metrics.get("completed", 0.0)
                n = round(sum(graded.values()) / len(graded)) if graded else 0
            out[name] = MetricValue(
                value=value,
                low=min(means),
                high=max(means),
                n=n,
                kind=spec.kind,
                direction=spec.direction,
                tolerance=spec.tolerance,
                gated=spec.gated,
                unit=spec.unit,
                samples=means if spec.kind == "continuous" else [],
            )
        peak = [a.metrics["output_throughput"] for a in ok if "output_throughput" in a.metrics]
        if peak:
            out["peak_output_throughput"] = MetricValue(
                value=max(peak), n=len(peak), kind="continuous", direction="higher", gated=False, unit="tok/s"
            )
        return out

    def report_section(self, scorecard: Scorecard) -> str:
        return render_section(scorecard, self.run_dir, self.slo, self._reasons)

    def failure_reason(self, attempt: Attempt) -> str:
        return failure_reason(attempt) or super().failure_reason(attempt)

    def report_plots(self, scorecard: Scorecard, attempts: list[Attempt], run_dir: Path) -> list[Plot]:
        return serving_plots(run_dir)
