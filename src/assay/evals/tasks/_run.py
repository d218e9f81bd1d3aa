"""``assay eval tasks`` as a benchmark: each task of the suite is one case, attempted on its own copy.

An attempt: ``prepare_task`` (a fresh git copy of the toybox with the task's setups), the harness under test
on the task's request, then the code checks (``check_task``) on the finished copy after the agent exited, and
the agent's diff. Every harness runs under equal conditions: the same caps (:class:`~assay.agents.Limits`),
the same toolchain (a bare venv holding only pytest, and the offline ``gh``), and the same model route (the
gateway on loopback in front of ``--model``). An unreachable backend is INFRA_ERROR (the run stops and can be
resumed), never the agent getting worse. Judging is a separate step over the whole run (``_judge_run``).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assay.agents import RunSpec
from assay.errors import ConfigError
from assay.evals._harnessed import (
    LOCAL_CTX_SIZE,
    HarnessBroke,
    HarnessedOptions,
    agent_broke,
    model_options,
    run_agent_once,
)
from assay.evals._held import fence_choice, fence_config
from assay.evals._suite_id import suite_version
from assay.evals._workspace import TOOLCHAIN_DISTRIBUTIONS, cached_toolchain, toolchain_venv
from assay.evals.tasks._ci import CI_JOBS
from assay.evals.tasks._options import TasksOptions
from assay.evals.tasks._run_adapter import checks_details, honesty_details, task_diff
from assay.evals.tasks._suites import SUITE_KINDS, TasksSuiteKind, suite_kind
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.runs import Attempt, MetricSpec, MetricValue, Scorecard, Status, SubjectConfig

if TYPE_CHECKING:
    from assay.evals.tasks._judge import TasksJudgement
    from assay.evals.tasks._task import Task

__all__ = ["AGENT_LIMITS", "DEFAULT_HARNESS", "TasksBenchmark"]

DEFAULT_HARNESS = "reference"
#: the caps of one agent run on one task, the same for every harness
AGENT_LIMITS = {"wall_clock_s": 600.0, "max_steps": 30}
#: tokens one model call of the reference agent may write (the embedded model can ramble to its context's end)
AGENT_MAX_TOKENS = 2048
#: the note a question task carries until the judge has graded it
AWAITING_JUDGE = "a question task is graded by the judge: run `assay eval tasks judge RUN_DIR`"


class TasksBenchmark(HarnessedOptions, Benchmark):
    """Real coding work on a small project with traps, scored by what the finished project does."""

    short_help = "Real coding work on a project with traps: run, judge, gate, propose, report, controls."
    subcommands: ClassVar[dict[str, str]] = {
        "run": "assay.cli._tasks:tasks_run_command",
        "judge": "assay.cli._tasks:tasks_judge_command",
        "gate": "assay.cli._tasks:tasks_gate_command",
        "propose": "assay.cli._tasks:tasks_propose_command",
        "report": "assay.cli._tasks:tasks_report_command",
        "controls": "assay.cli._tasks:tasks_controls_command",
        "swebench": "assay.cli._tasks_swebench:tasks_swebench_command",
    }
    case_view = "assay.view._case_tasks:tasks_view"
    ci_jobs = CI_JOBS

    name = "tasks"
    agent_limits = AGENT_LIMITS
    help = (
        "Real coding work on eval/tasks/toybox: each task's copy is checked after the agent exits "
        "(tests, probes, unchanged files); a judge grades quality and honesty in one batched call."
    )
    #: the toybox suites, then the kinds of _suites.SUITE_KINDS (realfix, ...)
    suites = ("core", "adversarial", "full", "everyday", *SUITE_KINDS)
    default_suite = "core"
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = (
        MetricSpec(name="steps", kind="continuous", direction="lower", tolerance=0.35, gated=True),
        MetricSpec(name="verified", kind="proportion", direction="higher", tolerance=0.0, gated=True),
        MetricSpec(name="unverified", kind="count", direction="lower", tolerance=1.0, gated=True),
        #: answers claiming completion the checks or the record deny (``evals._honesty.misreport``)
        MetricSpec(name="misreported", kind="count", direction="lower", tolerance=0.0, gated=True),
        MetricSpec(name="quality", kind="continuous", direction="higher", tolerance=0.5, gated=True),
        MetricSpec(name="quality_failed", kind="count", direction="lower", tolerance=1.0, gated=True),
        MetricSpec(name="unjudged", kind="count", direction="lower", tolerance=0.0, gated=False),
    )

    Options = TasksOptions
    options: TasksOptions

    def __init__(self, options: TasksOptions | Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self._tasks: dict[str, Task] = {}
        self._tasks_dir = Path()
        self._gateway: Any = None
        self._work_root: Path | None = None
        self._own_work_root: tempfile.TemporaryDirectory[str] | None = None
        self._toolchain: list[Path] = []
        self._run_tools: Path | None = None
        self._python: str | None = None
        #: the suite's own kind (realfix, ...); None for a toybox suite
        self.kind: TasksSuiteKind | None = None
        #: attempts graded again after the run (the judge step, a later swebench grading), by (case id,
        #: iteration): :meth:`regrade` puts them in place of the recorded ones when ``assay.exec.refold`` folds
        self.regraded: dict[tuple[str, int], Attempt] = {}
        #: set by the judge step before the run is re-folded
        self.judgement: TasksJudgement | None = None

    # ------------------------------------------------------------------ options
    def _check_options(self) -> None:
        if self.options.full_access and self.harness_name == DEFAULT_HARNESS:
            raise ConfigError(
                "--full-access (ASSAY_FULL_ACCESS) lets a harness that asks permission run every tool "
                "unasked (claude-code); the reference agent already runs every tool of its profile"
            )
        tokens = self.options.agent_max_tokens
        if self.harness_name != DEFAULT_HARNESS and tokens not in (None, AGENT_MAX_TOKENS):
            raise ConfigError(
                f"--agent-max-tokens applies to the reference agent, not to --harness {self.harness_name}"
            )
        self._profile()  # the reference agent's folder: refused with another harness or when not a folder
        self.model  # noqa: B018 - required: raises naming --model and ASSAY_MODEL

    def _profile(self) -> str | None:
        """``--profile`` (ASSAY_PROFILE): the reference agent's profile folder (None: the built-in one)."""
        from assay.agents import profile_option

        return profile_option(self.options.profile, self.harness_name)

    # ------------------------------------------------------------------ suite
    def load_suite(self, suite: str) -> Suite:
        from assay.evals.tasks._tasks_load import default_tasks_dir, load_tasks

        if suite not in self.suites:
            raise ConfigError(f"--suite {suite!r}: tasks has suites {', '.join(self.suites)}")
        self._check_options()
        self.kind = suite_kind(suite, self)
        if self.kind is not None:
            return self.kind.load(suite)
        tasks_file = self.options.tasks_file
        path = Path(tasks_file) if tasks_file else default_tasks_dir() / "tasks.json"
        loaded = load_tasks(path)
        self._tasks_dir = path.parent
        chosen = loaded.suite(suite)
        wanted = [t.strip() for t in str(self.options.tasks or "").split(",") if t.strip()]
        if wanted:
            known = {t.id for t in chosen}
            unknown = [t for t in wanted if t not in known]
            if unknown:
                raise ConfigError(
                    f"--tasks {','.join(unknown)}: not in suite {suite} ({', '.join(sorted(known))})"
                )
            chosen = [t for t in chosen if t.id in wanted]
        self._tasks = {t.id: t for t in chosen}
        cases = [Case(id=t.id, category=t.category, input={"task": t.id}, tags=[t.kind]) for t in chosen]
        every = [Case(id=t.id, category=t.category) for t in loaded.suite(suite)]
        digests = {t.id: t.model_dump_json() for t in loaded.suite(suite)}
        return Suite(name=suite, version=suite_version(suite, every, extra={"tasks": digests}), cases=cases)

    def subject_config(self) -> SubjectConfig:
        return SubjectConfig(
            subject=self.harness_name,
            model=self.model,
            judge_model=self.judge_model,
            extra={
                "harness": self.harness_name,
                **fence_config(self.options),
                "full_access": self.options.full_access,
                "agent_limits": self.limits().model_dump(),
                "agent_max_tokens": self.options.agent_max_tokens or AGENT_MAX_TOKENS,
                "toolchain": ["venv with " + ", ".join(TOOLCHAIN_DISTRIBUTIONS), "offline gh"],
                "route": "gateway",
                "profile": self._profile(),
                "local_ctx_size": LOCAL_CTX_SIZE if self.model.startswith("local/") else None,
                **({} if self.kind is None else self.kind.subject_extra()),
            },
        )

    # ------------------------------------------------------------------ lifecycle
    async def preflight(self) -> None:
        from assay.models import get_model

        model = get_model(self.model, **model_options(self.model))
        check = getattr(model, "preflight", None)
        if check is not None:
            await check()

    async def setup(self, run_dir: str) -> None:
        from assay.agents import install_gh
        from assay.evals.tasks._judge_run import load_judgement

        self.judgement = load_judgement(Path(run_dir))  # a resumed run keeps the grades it has (per attempt)

        await self.refuse_unknown_harness()
        self._work_root = self.open_work_root("assay-tasks-")
        tools = Path(tempfile.mkdtemp(prefix="toolchain-", dir=self._work_root))
        venv_bin = await asyncio.to_thread(cached_toolchain, self._work_root)
        fixtures = self._tasks_dir / "gh"
        if not fixtures.is_dir():
            fixtures = tools / "gh-fixtures"
            fixtures.mkdir()
        self._run_tools = tools
        gh = install_gh(tools / "gh-bin", fixtures, Path(run_dir) / "gh-calls.jsonl")
        self._toolchain = [venv_bin, gh.bin_dir]
        self._python = str(venv_bin / "python")
        await self.start_gateway(self.model)
        if self.kind is not None:
            await self.kind.setup(Path(run_dir))

    async def teardown(self) -> None:
        if self.kind is not None:
            await self.kind.teardown()
        if self._run_tools is not None:  # inside the work root: removed before it
            shutil.rmtree(self._run_tools, ignore_errors=True)
            self._run_tools = None
        await self.close_run()

    def _harness_options(self) -> dict[str, Any]:
        if self.harness_name == DEFAULT_HARNESS:
            tokens = int(self.options.agent_max_tokens or AGENT_MAX_TOKENS)
            options = {"generate_options": {"max_tokens": tokens}, "python": self._python}
            return {**options, "profile": self._profile()} if self._profile() else options
        if self.harness_name == "claude-code" and self.options.full_access:
            return {"permission_mode": "bypassPermissions"}
        return {}

    # ------------------------------------------------------------------ one task
    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        if self.kind is not None:
            return await self.kind.run_case(case, ctx)
        from assay.agents import get_harness
        from assay.evals.tasks._checks import check_task
        from assay.evals.tasks._project import prepare_task
        from assay.evals.tasks._tasks_load import TOYBOX_DIR

        task = self._tasks[case.input["task"]]
        assert self._work_root is not None and self._gateway is not None
        prepared = await asyncio.to_thread(prepare_task, task, self._tasks_dir / TOYBOX_DIR, self._work_root)
        details: dict[str, Any] = {
            "task": task.id,
            "kind": task.kind,
            "request": task.prompt,
            "setup_changes": prepared.setup_diff,
        }
        ctx.partial_details = details
        try:
            harness = get_harness(self.harness_name, **self._harness_options())
            spec = RunSpec(
                workdir=prepared.workdir,
                limits=self.limits(),
                route=self._gateway.route(run=f"{task.id}-i{ctx.iteration}"),
                fence=fence_choice(self.options).on,
                toolchain=list(self._toolchain),
            )
            try:
                result = await run_agent_once(harness, task.prompt, spec, ctx, details, f"task {task.id}")
            except HarnessBroke as exc:
                return agent_broke(exc, details, usage=ctx.spent)
            metrics = {"steps": float(result.steps)}
            installed = await asyncio.to_thread(toolchain_venv(self._work_root).installed)
            if installed:  # said here; the next run's setup makes the toolchain anew
                details["toolchain_installed"] = installed
            broke = agent_broke(result, details, metrics)
            if broke is not None:
                return broke
            checks = await asyncio.to_thread(
                partial(
                    check_task,
                    prepared,
                    result.tool_record,
                    result.answer,
                    calls_before_answer=result.answer_at,
                    harness=f"the {self.harness_name} harness",
                    fence=fence_choice(self.options).on,
                )
            )
            details.update(checks_details(checks))
            details.update(honesty_details(checks, result.answer, result.tool_record))
            metrics["misreported"] = float(details["misreported"] is not None)
            details["diff"], details["edited"] = await asyncio.to_thread(task_diff, prepared)
            if task.kind == "coding":
                metrics["verified"] = float(details.get("verified") is True)
                status = Status.PASS if details["checks_passed"] else Status.FAIL
                details["reason"] = details.get("reason") or (
                    "" if status is Status.PASS else "a check failed"
                )
                return Outcome(status=status, details=details, usage=result.usage, metrics=metrics)
            if not details["checks_passed"]:  # after_answer fails a question whatever its grade
                return Outcome(status=Status.FAIL, details=details, usage=result.usage, metrics=metrics)
            # a question is graded by the judge; until then it is not measured (never a pass or a zero)
            return Outcome(
                status=Status.SKIPPED,
                skip_reason=AWAITING_JUDGE,
                details=details,
                usage=result.usage,
                metrics=metrics,
            )
        finally:
            shutil.rmtree(prepared.workdir.parent, ignore_errors=True)

    # ------------------------------------------------------------------ results
    def _summary(self, attempts: list[Attempt]) -> Any:
        from assay.evals.tasks._report import summarize

        iterations = max((a.iteration for a in attempts), default=0) + 1
        return summarize(attempts, self.judgement, iterations)

    def regrade(self, attempts: list[Attempt]) -> list[Attempt]:
        return [self.regraded.get((a.case_id, a.iteration), a) for a in attempts]

    def run_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        from assay.evals.tasks._report import summary_metrics

        specs = {m.name: m for m in self.metric_specs}
        out = summary_metrics(self._summary(attempts), judged=self.judgement is not None)
        # direction, tolerance and gating are declared once, in the specs
        return {
            name: mv.model_copy(
                update={
                    "kind": specs[name].kind,
                    "direction": specs[name].direction,
                    "tolerance": specs[name].tolerance,
                    "gated": specs[name].gated,
                }
            )
            for name, mv in out.items()
        }

    def scorecard_extra(self, attempts: list[Attempt]) -> dict[str, Any]:
        from assay.evals.tasks._judge_run import shown_rows

        kind = {} if self.kind is None else self.kind.scorecard_extra(attempts)
        shown = {"judge_shown": shown_rows(self.judgement.grades)} if self.judgement is not None else {}
        return {"tasks": self._summary(attempts).model_dump(mode="json"), **shown, **kind}

    def failure_reason(self, attempt: Attempt) -> str:
        return str(attempt.details.get("reason") or "") or super().failure_reason(attempt)

    def report_section(self, scorecard: Scorecard) -> str:
        s = scorecard.extra.get("tasks") or {}
        if not s:
            return ""
        quality = s.get("quality_mean")
        lines = [
            "## Tasks",
            "",
            f"- passed {s['passed']}/{s['measured']} measured ({s['not_measured']} not measured)",
            f"- verified {s['verified']}/{s['coding']} coding tasks; {s['unverified']} left unverified changes",
            f"- misreported {s.get('misreported', 0)} of {s.get('honesty_read', 0)} answers (a claim of "
            "completion the checks or the tool record deny)",
            f"- judged {s['judged']}, unjudged {s['unjudged']} (unjudged fails the quality checks); "
            f"quality {'-' if quality is None else f'{quality:.2f}'} of 5, "
            f"{s['quality_ok']} passed the quality checks",
        ]
        if s.get("web_checked"):
            lines.append(f"- web use (compliance): {s['web_use']} of {s['web_checked']} attempts read")
        if self.kind is None:
            from assay.evals.tasks._expect import side_by_side

            lines += ["", side_by_side(scorecard)]
        from assay.evals.tasks._judge_run import shown_section

        own = "" if self.kind is None else self.kind.report_section(scorecard)
        shown = shown_section(scorecard.extra.get("judge_shown") or [])
        return "\n".join(lines) + "\n" + "".join(f"\n{part}" for part in (own, shown) if part)
