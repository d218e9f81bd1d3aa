"""The ``memory`` benchmark class: scenario probes or LongMemEval questions as cases, and their report."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assay.errors import ConfigError
from assay.evals._suite_id import suite_version
from assay.evals.memory._ci import CI_JOBS
from assay.evals.memory._locomo import load_locomo
from assay.evals.memory._locomo_bench import LocomoMixin, locomo_path
from assay.evals.memory._locomo_run import KS
from assay.evals.memory._longmemeval import LMEQuestion, answer_question, cases, load_longmemeval
from assay.evals.memory._options import FULL_EMBEDDER, FULL_MODEL, MemoryOptions
from assay.evals.memory._report import failure_reason, scenario_plot
from assay.evals.memory._scenario import Scenario, load_scenarios
from assay.evals.memory._simulate import ScenarioRun, simulate
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite, validate_options
from assay.intervals import bootstrap_interval, wilson_interval
from assay.runs import Attempt, MetricSpec, MetricValue, Scorecard, Status, SubjectConfig

if TYPE_CHECKING:
    from assay.report import Plot

METRIC_OF_KIND = {
    "shown_recall": "shown_recall",
    "shown_clean": "shown_clean",
    "store_accuracy": "store_accuracy",
    "answer": "answer_accuracy",
}


def default_scenario_dir() -> Path:
    """``eval/memory`` of the working directory, else of the source checkout this package lives in."""
    here = Path.cwd() / "eval" / "memory"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[4] / "eval" / "memory"


def describe_scenarios(directory: Path) -> str:
    lines: list[str] = []
    for s in load_scenarios(directory):
        lines.append(f"{s.id}  ({len(s.chats)} chats)  {s.theme}")
        for p in s.probes:
            only = "  [full only]" if p.kind == "answer" else ""
            tags = f"  #{' #'.join(p.tags)}" if p.tags else ""
            lines.append(f"  {s.id}/{p.id:<28} {p.kind:<15} after {p.after}{tags}{only}")
    return "\n".join(lines)


class MemoryBenchmark(LocomoMixin, Benchmark):
    """Long-term memory: months of chats on a simulated clock, probed for what the agent is shown and holds."""

    short_help = "Long-term memory over months of simulated chats."
    case_view = "assay.view._case:memory_view"
    ci_jobs = CI_JOBS

    name = "memory"
    help = "Long-term memory: changing facts, forgets, lessons, planted text, over simulated months."
    suites = ("pr", "full")
    default_suite = "pr"
    #: the store and pipeline run synchronously in the event loop: --timeout is refused
    interruptible = False
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = (
        # per-probe checks passing (0/1): proportions over the probes that carry them
        MetricSpec(name="shown_recall", kind="proportion", direction="higher", tolerance=0.0, gated=True),
        MetricSpec(name="shown_clean", kind="proportion", direction="higher", tolerance=0.0, gated=True),
        MetricSpec(name="store_accuracy", kind="proportion", direction="higher", tolerance=0.0, gated=True),
        MetricSpec(
            name="answer_accuracy", kind="proportion", direction="higher", tolerance=0.05, gated=False
        ),
        MetricSpec(name="lme_accuracy", kind="proportion", direction="higher", tolerance=0.05, gated=False),
        # imported data (LoCoMo, LongMemEval): reported beside published figures, never gated
        *(
            MetricSpec(name=n, kind="proportion", direction="higher", tolerance=0.05, gated=False)
            for n in (
                "evidence_recall@5",
                "evidence_recall@10",
                "judge_accuracy",
                "lme_recall@5",
                "lme_recall@10",
            )
        ),
        MetricSpec(name="locomo_f1", kind="continuous", direction="higher", tolerance=0.05, gated=False),
    )

    Options = MemoryOptions
    options: MemoryOptions

    def __init__(self, options: MemoryOptions | Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self._scenarios: dict[str, Scenario] = {}
        self._questions: list[LMEQuestion] = []
        self._suite = ""
        self._runs: dict[tuple[str, int], ScenarioRun] = {}
        self._locks: dict[tuple[str, int], asyncio.Lock] = {}
        self._model: Any = None
        self._embedder: Any = None
        self._run_dir = Path(".")
        self._locomo_init()

    @classmethod
    def describe(cls, given: MemoryOptions | Mapping[str, Any]) -> str:
        """What ``--list`` prints: every scenario and its checks."""
        options = validate_options(MemoryOptions, given)
        if options.dataset and options.dataset.partition(":")[0] == "locomo":
            convs = load_locomo(locomo_path(options.dataset, offline=options.offline))
            return "\n".join(
                f"{q.id:<18} {q.category_name:<12} {q.question}" for c in convs for q in c.questions
            )
        if options.dataset:
            qs = load_longmemeval(_dataset_path(options.dataset))
            return "\n".join(f"{q.question_id:<24} {q.question_type:<28} {q.question}" for q in qs)
        return describe_scenarios(Path(options.scenarios_dir or default_scenario_dir()))

    # ------------------------------------------------------------------ suite
    def _scenario_dir(self) -> Path:
        return Path(self.options.scenarios_dir or default_scenario_dir())

    def load_suite(self, suite: str) -> Suite:
        dataset = self.options.dataset
        if dataset and dataset.partition(":")[0] == "locomo":
            self._suite = "locomo"
            self.metric_specs = tuple(s.model_copy(update={"gated": False}) for s in type(self).metric_specs)
            return self._locomo_suite(dataset)
        if dataset:
            if self.options.model and not self.options.judge_model:
                raise ConfigError(
                    "--dataset longmemeval grades a model's answers with a judge, as its authors do: "
                    "give --judge-model (or drop --model to check what the agent is shown)"
                )
            self._suite = "longmemeval"
            self._questions = load_longmemeval(_dataset_path(str(dataset)))
            lme_cases = cases(self._questions)
            version = suite_version("longmemeval", lme_cases, files=[_dataset_path(str(dataset))])
            self.metric_specs = tuple(s.model_copy(update={"gated": False}) for s in type(self).metric_specs)
            return Suite(name="longmemeval", version=version, cases=lme_cases)
        if suite not in self.suites:
            raise ConfigError(f"--suite {suite!r}: memory has suites {', '.join(self.suites)}")
        if suite == "pr" and (self.options.model or self.options.embedder):
            raise ConfigError(
                "--model/--embedder apply to --suite full (pr uses each scenario's scripted answers and the "
                "hashing embedder)"
            )
        self._suite = suite
        scenarios = load_scenarios(self._scenario_dir())
        self._scenarios = {s.id: s for s in scenarios}
        if suite == "full":
            self.metric_specs = tuple(s.model_copy(update={"gated": False}) for s in type(self).metric_specs)
        case_list: list[Case] = []
        for s in scenarios:
            for p in s.probes:
                if p.kind == "answer" and suite == "pr":
                    continue
                case_list.append(
                    Case(
                        id=f"{s.id}/{p.id}",
                        category=p.kind,
                        input={"scenario": s.id, "probe": p.id},
                        tags=[s.id, *p.tags],
                    )
                )
        content = {"scenarios": {s.id: s.digest for s in scenarios}}
        return Suite(name=suite, version=suite_version(suite, case_list, extra=content), cases=case_list)

    def subject_config(self) -> SubjectConfig:
        scripted = self._suite == "pr" or (
            self._suite in ("longmemeval", "locomo") and not self.options.model
        )
        return SubjectConfig(
            subject="assay.memory",
            model="scripted:scenario-answers"
            if self._suite == "pr"
            else self.options.model or (None if scripted else FULL_MODEL),
            judge_model=self.options.judge_model,
            embedder=self._embedder_spec(),
            extra={"dataset": self.options.dataset},
        )

    def _embedder_spec(self) -> str:
        if self._suite == "pr":
            return "hash"
        return str(self.options.embedder or (FULL_EMBEDDER if self._suite == "full" else "hash"))

    # ------------------------------------------------------------------ lifecycle
    async def preflight(self) -> None:
        """Build the embedder and model; a model that can load or answer ``preflight`` is checked now."""
        from assay.embed import get_embedder

        self._embedder = get_embedder(self._embedder_spec())
        model_spec = self.options.model or (FULL_MODEL if self._suite == "full" else None)
        if model_spec:
            from assay.models import get_model

            self._model = get_model(model_spec)
            check = getattr(self._model, "preflight", None)
            if check is not None:
                await check()
        if self.options.judge_model:
            from assay.judge import Judge, holds_to_schema
            from assay.models import get_model

            spec = self.options.judge_model
            self._judge = Judge(get_model(spec), constrained=holds_to_schema(spec))
        if self._suite == "locomo":
            await self._locomo_preflight()

    async def setup(self, run_dir: str) -> None:
        self._run_dir = Path(run_dir)
        if self._embedder is None:  # a caller that skipped preflight
            await self.preflight()

    async def teardown(self) -> None:
        await self._locomo_teardown()

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        if self._suite == "locomo":
            return await self._locomo_case(case, ctx)
        if self._suite == "longmemeval":
            return await self._run_question(case, ctx)
        scenario = self._scenarios[case.input["scenario"]]
        run = await self._scenario_run(scenario, ctx)
        verdict = run.verdicts[case.input["probe"]]
        if verdict.skipped:
            return Outcome.skipped(verdict.skipped)
        first_probe = next(p.id for p in scenario.probes if self._suite == "full" or p.kind != "answer")
        probe = next(p for p in scenario.probes if p.id == verdict.probe_id)
        details: dict[str, Any] = {
            "scenario": scenario.id,
            "probe": verdict.probe_id,
            "kind": verdict.kind,
            "query": probe.query,
            "note": probe.note,
            "at": verdict.at.isoformat(),
            "failures": verdict.failures,
            "upkeep_ms_p50": round(1000 * statistics.median(run.upkeep_seconds), 3),
            "rejected_candidates": len(run.rejected),
        }
        if verdict.shown is not None:
            details["shown"] = verdict.shown[:4000]
        if verdict.answer is not None:
            details["answer"] = verdict.answer[:2000]
        if run.extraction_errors:
            details["extraction_errors"] = run.extraction_errors[:10]
        passed = verdict.passed
        return Outcome(
            status=Status.PASS if passed else Status.FAIL,
            score=1.0 if passed else 0.0,
            metrics={METRIC_OF_KIND[verdict.kind]: 1.0 if passed else 0.0},
            details=details,
            usage=run.usage if verdict.probe_id == first_probe and run.usage.calls else None,
        )

    async def _scenario_run(self, scenario: Scenario, ctx: AttemptContext) -> ScenarioRun:
        iteration = ctx.iteration
        key = (scenario.id, iteration)
        lock = self._locks.setdefault(key, asyncio.Lock())
        # the probes of one scenario share its simulation: a probe is timed from its turn, so the one that
        # ran the simulation carries its time and the others only their own check
        async with ctx.exclusive(lock):
            if key not in self._runs:
                if self._suite == "pr":
                    from assay.models.scripted import ScriptedModel

                    model: Any = ScriptedModel(scenario.scripted_replies())
                    answer_model = None
                else:
                    model = answer_model = self._model
                db = self._run_dir / "memory" / f"{scenario.id}-i{iteration}.db"
                db.parent.mkdir(parents=True, exist_ok=True)
                self._runs[key] = await simulate(
                    scenario, db, embedder=self._embedder, model=model, answer_model=answer_model
                )
        return self._runs[key]

    async def _run_question(self, case: Case, ctx: AttemptContext) -> Outcome:
        q = self._questions[case.input["index"]]
        if q.abstention and self._model is None:
            return Outcome.skipped("an abstention question can only be graded on a model's answer (--model)")
        db = self._run_dir / "memory" / f"lme-{_safe(q.question_id)}-i{ctx.iteration}.db"
        db.parent.mkdir(parents=True, exist_ok=True)
        res = await answer_question(q, db, embedder=self._embedder, model=self._model, judge=self._judge)
        details = {
            "question": q.question[:500],
            "question_type": q.question_type,
            "graded_on": res["graded_on"],
            "gold": q.answer,
            "answer": res["answer"],
            "shown": str(res["shown"])[:4000],
        }
        if res["judge_reason"]:
            details["judge_reason"] = res["judge_reason"]
        usage = res["usage"] if res["usage"].calls else None
        if res["correct"] is None:  # the judge gave no usable verdict: unjudged, never a fail
            return Outcome(status=Status.ERROR, metrics=res["recall"], details=details, usage=usage)
        ok = bool(res["correct"])
        return Outcome(
            status=Status.PASS if ok else Status.FAIL,
            score=1.0 if ok else 0.0,
            metrics={"lme_accuracy": 1.0 if ok else 0.0, **res["recall"]},
            details=details,
            usage=usage,
        )

    # ------------------------------------------------------------------ results
    def run_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        """Per question type accuracy for imported data (reported, never gated)."""
        if self._suite == "locomo":
            return self._locomo_metrics(attempts)
        if self._suite != "longmemeval":
            return {}
        by_type: dict[str, list[float]] = {}
        questions: dict[str, set[str]] = {}
        recall: dict[str, list[float]] = {}
        for a in attempts:
            if a.status in (Status.PASS, Status.FAIL):
                by_type.setdefault(a.category, []).append(1.0 if a.status == Status.PASS else 0.0)
                questions.setdefault(a.category, set()).add(a.case_id)
            for k in KS:
                if f"lme_recall@{k}" in a.metrics:
                    recall.setdefault(f"lme_recall@{k}[{a.category}]", []).append(
                        a.metrics[f"lme_recall@{k}"]
                    )
        # n: the questions (the independent items), not their repeated attempts
        out = {
            f"lme_accuracy[{t}]": MetricValue(
                value=sum(v) / len(v),
                low=wilson_interval(round(sum(v)), len(v))[0],
                high=wilson_interval(round(sum(v)), len(v))[1],
                n=len(questions[t]),
                kind="proportion",
                gated=False,
                tolerance=0.05,
            )
            for t, v in sorted(by_type.items())
        }
        for name, v in sorted(recall.items()):
            low, high = bootstrap_interval(v)
            out[name] = MetricValue(
                value=sum(v) / len(v), low=low, high=high, n=len(v), kind="proportion", gated=False
            )
        return out

    def failure_reason(self, attempt: Attempt) -> str:
        return failure_reason(attempt) or super().failure_reason(attempt)

    def report_plots(self, scorecard: Scorecard, attempts: list[Attempt], run_dir: Path) -> list[Plot]:
        plot = scenario_plot(scorecard) if self._suite in ("pr", "full") else None
        return [plot] if plot is not None else []

    def report_section(self, scorecard: Scorecard) -> str:
        if self._suite == "locomo":
            return self._locomo_section(scorecard)
        lines = ["## Memory", ""]
        if self._suite == "longmemeval":
            ms = scorecard.summary.metrics
            lines += [
                "| question type | accuracy | n | evidence-session recall@5 | recall@10 |",
                "|---|---|---|---|---|",
            ]
            for name, m in ms.items():
                if name.startswith("lme_accuracy[") and m.value is not None:
                    t = name[13:-1]
                    cells = [_pct(ms.get(f"lme_recall@{k}[{t}]")) for k in KS]
                    lines.append(f"| {t} | {100 * m.value:.1f}% | {m.n} | {' | '.join(cells)} |")
            lines += [
                "",
                "Answers are graded by the judge with each question type's rule, as LongMemEval's evaluation "
                "does; without --model a question passes when its answer is in what the agent is shown.",
            ]
            return "\n".join(lines)
        lines += ["| scenario | checks | passed | failed checks |", "|---|---|---|---|"]
        per: dict[str, list[tuple[str, bool]]] = {}
        for c in scorecard.cases:
            sid, _, probe = c.case_id.partition("/")
            per.setdefault(sid, []).append((probe, c.passed == c.measured and c.measured > 0))
        for sid, checks in per.items():
            failed = ", ".join(p for p, ok in checks if not ok) or "-"
            lines.append(f"| {sid} | {len(checks)} | {sum(ok for _, ok in checks)} | {failed} |")
        upkeep = [s for r in self._runs.values() for s in r.upkeep_seconds]
        if upkeep:
            lines += [
                "",
                f"Upkeep per chat: median {1000 * statistics.median(upkeep):.2f} ms, "
                f"max {1000 * max(upkeep):.2f} ms over {len(upkeep)} chats.",
            ]
        return "\n".join(lines)


def _dataset_path(spec: str) -> Path:
    kind, sep, path = spec.partition(":")
    if not sep or kind != "longmemeval" or not path:
        raise ConfigError(f"--dataset {spec!r}: expected longmemeval:FILE")
    return Path(path)


def _pct(m: MetricValue | None) -> str:
    return "-" if m is None or m.value is None else f"{100 * m.value:.1f}%"


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)[:80]
