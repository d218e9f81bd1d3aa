"""``assay eval tasks --suite swebench``: SWE-bench instances as tasks, graded by their own tests.

An attempt: the repository at ``base_commit`` (an isolated checkout: the fix is in no object), the agent's
only Python a bare venv, the issue text plus :data:`RULES` as the prompt; after the agent exits its diff
(new files included) is a line of ``predictions.jsonl``, and an empty one fails at once. Then (unless
``--no-evaluate``) one grader, chosen before anything runs, grades it: resolved is PASS, unresolved FAIL, an
instance the grader cannot build NOT_RUN with the reason. The judge may grade quality against the gold patch,
read only in the judge step; it never decides the pass.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util import Scrubber, write_scrubbed
from assay.agents import RunSpec
from assay.agents.fence import resolve_fence
from assay.errors import ConfigError, InfraError
from assay.evals._harnessed import run_agent_once
from assay.evals._suite_id import suite_version
from assay.evals._workspace import DIFF_KEEP
from assay.evals.tasks._options import SwebenchGradeOptions, TasksOptions
from assay.evals.tasks._suites import JudgeInputs, TasksSuiteKind
from assay.exec import AttemptContext, Case, Outcome, Suite, validate_options
from assay.runs import Status

if TYPE_CHECKING:
    from assay.evals.tasks._judge import TaskGrade
    from assay.evals.tasks._swebench_data import SwebenchInstance
    from assay.evals.tasks._swebench_grade import Grading, Verdict
    from assay.evals.tasks._swebench_validate import Validation
    from assay.runs import Attempt, Scorecard

__all__ = ["PREDICTIONS", "RULES", "SETTINGS", "SwebenchSuite", "grade_run_dir"]

PREDICTIONS = "predictions.jsonl"
SETTINGS = "swebench.json"
RULES = (
    "Work only inside this checkout (the current directory) and make the smallest change that resolves the "
    "issue above. Do not use the internet: no web search, no fetching pages or packages. The project's tests "
    "cannot be run here (its dependencies are not installed), so reason from the code. Leave your change in "
    "the working tree; do not commit it."
)
_NOT_GRADED = "not graded (--no-evaluate): `assay eval tasks swebench RUN_DIR` grades it"


#: the options the swebench suite and its grading command read (a run's, or the grading command's)
Chosen = TasksOptions | SwebenchGradeOptions


def _grade_options(given: Chosen | Mapping[str, Any]) -> Chosen:
    """``given`` as typed options (a mapping is the grading command's, validated)."""
    if isinstance(given, TasksOptions | SwebenchGradeOptions):
        return given
    raw = dict(given)
    if isinstance(raw.get("instances"), list):  # a run's recorded selection (swebench.json)
        raw["instances"] = ",".join(raw["instances"])
    return validate_options(SwebenchGradeOptions, raw)


def swebench_root(options: Chosen) -> Path:
    """``--work-root``/swebench, else ``$ASSAY_HOME/work/swebench``: the dataset, repository and env caches."""
    from assay._util import assay_home

    given = options.work_root
    return (Path(given) if given else assay_home() / "work") / "swebench"


def choose(given: Chosen | Mapping[str, Any]) -> list[SwebenchInstance]:
    """The instances ``--dataset``/``--instances``/``--sample``/``--seed``/``--offline`` pick."""
    from assay.evals.tasks._swebench_data import dataset_file, load_instances, select_instances

    options = _grade_options(given)
    path = dataset_file(options.dataset, swebench_root(options) / "dataset", offline=options.offline)
    ids = [i.strip() for i in str(options.instances or "").split(",") if i.strip()]
    sample = options.sample
    if sample is not None and "seed" not in options.model_fields_set:
        # the bare `assay eval tasks`: its --seed is the run's
        raise ConfigError("--sample: use `assay eval tasks run --suite swebench --sample N --seed S`")
    return select_instances(load_instances(path), ids, sample=sample, seed=options.seed or 0)


class SwebenchSuite(TasksSuiteKind):
    """The ``swebench`` suite of ``eval tasks``."""

    toolchain = ("bare venv (nothing installed)",)
    own_options = (
        "instances", "sample", "seed", "dataset", "offline", "repo_source", "repo_specs", "grader", "no_evaluate",
        "keep_images", "docker_platform",
    )  # fmt: skip

    def __init__(self, bench: Any) -> None:
        super().__init__(bench)
        self.instances: dict[str, SwebenchInstance] = {}
        self.grader: str | None = None
        self.run_dir: Path | None = None
        self.platform = ""
        self.scrubber = Scrubber()
        self._lock = threading.Lock()

    def _opt(self, name: str) -> Any:
        return getattr(self.bench.options, name)

    def load(self, suite: str) -> Suite:
        from assay.evals.tasks._swebench_grade import check_platform, resolve_grader

        if self._opt("tasks") or self._opt("tasks_file"):
            raise ConfigError(
                "--tasks/--tasks-file choose toybox tasks: --suite swebench takes --instances or --sample"
            )
        self.platform = check_platform(self._opt("docker_platform"))
        if not self._opt("no_evaluate"):  # an official grader without Docker stops here, before anything runs
            self.grader = resolve_grader(str(self._opt("grader") or "auto"))
        chosen = choose(self.bench.options)
        self.instances = {i.instance_id: i for i in chosen}
        cases = [
            Case(id=i.instance_id, category=i.repo, input={"instance": i.instance_id}, tags=["swebench"])
            for i in chosen
        ]
        digests = {
            i.instance_id: hashlib.sha256(json.dumps(i.row(), sort_keys=True).encode()).hexdigest()
            for i in chosen
        }
        # the grader is part of the suite's identity: local and official verdicts are never compared
        version = suite_version(
            suite, cases, extra={"instances": digests, "grader": self.grader or "ungraded"}
        )
        return Suite(name=suite, version=version, cases=cases)

    def subject_extra(self) -> dict[str, Any]:
        return {
            "grader": self.grader or "ungraded",
            "toolchain": list(self.toolchain),
            "fence_hides": "instance cache",
        }

    async def setup(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        settings = {
            "dataset": str(self._opt("dataset") or ""),
            "repo_source": str(self._opt("repo_source") or ""),
            "repo_specs": str(self._opt("repo_specs") or ""),
            "work_root": str(self._opt("work_root") or ""),
            "offline": bool(self._opt("offline")),
            "grader": self.grader,
            "docker_platform": self.platform,
            "instances": list(self.instances),
        }
        self.scrubber = Scrubber(extra_values=self.bench.secret_values())
        write_scrubbed(run_dir / SETTINGS, json.dumps(settings, indent=1) + "\n", self.scrubber)

    def _harness(self, python: Path) -> Any:
        from assay.agents import get_harness

        options = self.bench._harness_options()
        if "python" in options:
            options["python"] = str(python)  # the reference agent's python is the bare venv's
        return get_harness(self.bench.harness_name, **options)

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        from assay.evals._harnessed import HarnessBroke, agent_broke
        from assay.evals._isolate import checkout_problem, isolated_checkout
        from assay.evals._workspace import AgentVenv, agent_patch, bare_venv
        from assay.evals.tasks._compliance import web_use
        from assay.evals.tasks._swebench_data import prediction_line
        from assay.evals.tasks._swebench_grade import repo_source

        inst = self.instances[case.input["instance"]]
        root = swebench_root(self.bench.options)
        assert self.run_dir is not None and self.bench._gateway is not None
        place = Path(self.bench._work_root) / "swebench-attempts" / f"{inst.instance_id}-i{ctx.iteration}"
        shutil.rmtree(place, ignore_errors=True)
        mirrors = self._opt("repo_source")
        prompt = f"{inst.problem_statement.strip()}\n\n{RULES}"
        details: dict[str, Any] = {"instance_id": inst.instance_id, "repo": inst.repo, "request": prompt}
        ctx.partial_details = details
        key = f"swebench-{place.name}"
        if self.grader is not None:  # the grader first shows it works on this instance, or it is not run
            check = await asyncio.to_thread(self._validation, inst)
            details["validation"] = _validation_details(check)
            if not check.validated:
                details["reason"] = f"the grader is not validated on this instance: {check.reason}"
                return Outcome(status=Status.NOT_RUN, details=details, skip_reason=details["reason"])
        try:
            try:
                source = repo_source(inst.repo, Path(mirrors) if mirrors else None)
                repo = await asyncio.to_thread(
                    functools.partial(isolated_checkout, offline=bool(self._opt("offline"))),
                    source,
                    inst.base_commit,
                    place / "repo",
                    root / "repo-cache",
                )
            except (ConfigError, InfraError) as exc:  # this instance is not run; the others go on
                details["reason"] = checkout_problem(exc)
                return Outcome(status=Status.NOT_RUN, details=details, skip_reason=details["reason"])
            venv = await asyncio.to_thread(bare_venv, Path(self.bench._work_root), key)
            spec = RunSpec(
                workdir=repo,
                limits=self.bench.limits(),
                route=self.bench._gateway.route(run=f"{inst.instance_id}-i{ctx.iteration}"),
                fence=resolve_fence(self._opt("fence")).on,
                toolchain=[venv.bin],
            )
            harness = self._harness(venv.python)
            try:
                result = await run_agent_once(
                    harness, prompt, spec, ctx, details, f"instance {inst.instance_id}"
                )
            except HarnessBroke as exc:
                return agent_broke(exc, details, usage=ctx.spent)
            metrics = {"steps": float(result.steps)}
            details["venv_installed"] = venv.installed()  # what the agent installed (the venv goes with it)
            # web use is a compliance finding (the prompt forbids it); the tests still decide the pass
            details["compliance"] = [f.model_dump() for f in web_use(result.tool_record)]
            broke = agent_broke(result, details, metrics)
            if broke is not None:
                return broke
            patch = await asyncio.to_thread(agent_patch, repo, inst.base_commit)
            details["diff"] = patch[:DIFF_KEEP]
            model = f"{self.bench.harness_name}/{self.bench.model}"
            line = self.scrubber.clean(prediction_line(inst.instance_id, model, patch), PREDICTIONS)
            with self._lock, open(self.run_dir / PREDICTIONS, "a", encoding="utf-8") as fh:
                fh.write(line)
            if not patch.strip():
                details["reason"] = "the agent left no change (an empty diff)"
                return Outcome(status=Status.FAIL, details=details, usage=result.usage, metrics=metrics)
            if self.grader is None:
                return Outcome(
                    status=Status.SKIPPED,
                    skip_reason=_NOT_GRADED,
                    details=details,
                    usage=result.usage,
                    metrics=metrics,
                )
            verdict = await asyncio.to_thread(self._grade, inst, patch)
            return _outcome(verdict, details, result.usage, metrics)
        finally:
            await asyncio.to_thread(shutil.rmtree, place, True)
            await asyncio.to_thread(AgentVenv(Path(self.bench._work_root) / "venvs" / key, key).remove)

    def _grading(self) -> Grading:
        from assay.evals.tasks._swebench_grade import Grading
        from assay.evals.tasks._swebench_local import load_repo_specs

        mirrors, specs = self._opt("repo_source"), self._opt("repo_specs")
        assert self.grader is not None
        return Grading(
            self.grader,
            swebench_root(self.bench.options) / "grade",
            keep_images=bool(self._opt("keep_images")),
            mirrors=Path(mirrors) if mirrors else None,
            specs=load_repo_specs(Path(specs) if specs else None) if self.grader == "local" else {},
            cache=swebench_root(self.bench.options) / "repo-cache",
            docker_platform=self.platform,
            offline=bool(self._opt("offline")),
        )

    def _validation(self, inst: SwebenchInstance) -> Validation:
        from assay.evals.tasks._swebench_validate import validation

        with (
            self._lock
        ):  # one instance graded at a time (a local env is shared by the instances of a version)
            return validation(inst, self._grading())

    def _grade(self, inst: SwebenchInstance, patch: str) -> Verdict:
        from dataclasses import replace

        with self._lock:
            # validated before the agent ran (run_case): only a validated grader grades a model patch
            return replace(self._grading().one(inst, "model", patch), validated=True)

    # ------------------------------------------------------------------ the judge step (after every agent exited)
    def judge_inputs(self, attempts: list[Attempt]) -> JudgeInputs:
        from collections import defaultdict

        from assay.evals.tasks._judge import TaskView

        by_pass: dict[int, list[tuple[Attempt, TaskView]]] = defaultdict(list)
        for att in sorted(attempts, key=lambda a: (a.iteration, a.case_id)):
            inst = self.instances.get(att.case_id)
            if inst is None or att.status not in (Status.PASS, Status.FAIL) or not att.details.get("diff"):
                continue
            request = (
                f"{att.details.get('request', '')}\n\n(The upstream fix, one correct answer, not the only one; "
                f"grade quality only, the tests decided the pass:)\n{inst.patch[:6000]}"
            )
            view = TaskView(
                task_id=att.case_id,
                request=request,
                answer=str(att.details.get("answer") or ""),
                diff=str(att.details.get("diff") or ""),
                record=[str(x) for x in att.details.get("commands", [])],
                checks_ran=["swebench tests"],
            )
            by_pass[att.iteration].append((att, view))
        return "", by_pass

    def verdict(self, att: Attempt, grade: TaskGrade) -> Attempt | None:
        return None  # the tests decide the pass; the judge's grade is kept in judge.json

    def scorecard_extra(self, attempts: list[Attempt]) -> dict[str, Any]:
        from assay.evals.tasks._report_kinds import swebench_rows, swebench_validation

        return {
            "swebench": [r.model_dump(mode="json") for r in swebench_rows(attempts)],
            "swebench_validation": swebench_validation(attempts).model_dump(mode="json"),
        }

    def report_section(self, scorecard: Scorecard) -> str:
        from assay.evals.tasks._report_kinds import swebench_section

        return swebench_section(scorecard)


def _validation_details(check: Validation) -> dict[str, Any]:
    """What an attempt records of its instance's validation (the scorecard counts them)."""
    return {
        "validated": check.validated,
        "outcome": check.outcome,
        "reason": check.reason,
        "grader_version": check.grader_version,
        "cached": check.cached,
    }


def _outcome(verdict: Verdict, details: dict[str, Any], usage: Any, metrics: dict[str, float]) -> Outcome:
    from dataclasses import asdict

    details["grade"] = asdict(verdict)
    details["grader"] = verdict.grader
    if verdict.validated is not None and "validation" not in details:  # graded later (RUN_DIR)
        details["validation"] = {"validated": verdict.validated}
    if verdict.status == "not_run":
        details["reason"] = f"grader: {verdict.grader} could not grade it: {verdict.reason}"
        return Outcome(
            status=Status.NOT_RUN,
            details=details,
            usage=usage,
            metrics=metrics,
            skip_reason=details["reason"],
        )
    f2p, p2p = verdict.fail_to_pass, verdict.pass_to_pass
    counts = f"FAIL_TO_PASS {f2p[0]}/{f2p[1]}, PASS_TO_PASS {p2p[0]}/{p2p[1]}"
    if verdict.resolved:
        details["reason"] = ""
        return Outcome(status=Status.PASS, details=details, usage=usage, metrics=metrics)
    details["reason"] = f"grader: {verdict.grader}: unresolved ({verdict.reason or counts})"
    return Outcome(status=Status.FAIL, details=details, usage=usage, metrics=metrics)


def grade_run_dir(
    run_dir: Path | None,
    given: SwebenchGradeOptions | Mapping[str, Any],
    validations: list[Validation] | None = None,
) -> tuple[str, list[Verdict], Path | None]:
    """``assay eval tasks swebench [DIR]``: grade DIR's predictions (and with ``validate`` the gold and empty
    patches) with one grader, each model patch only where the grader is validated on its instance; writes
    ``DIR/grades-<grader>.json``. Returns (grader, verdicts, that file); the validations used are appended to
    ``validations`` when given."""
    from assay._util import Scrubber
    from assay.evals.tasks._swebench_grade import check_platform, resolve_grader, write_grades
    from assay.evals.tasks._swebench_validate import grade_instances

    options = validate_options(SwebenchGradeOptions, given)
    grader = resolve_grader(options.grader or "auto")  # before anything runs
    platform = check_platform(options.docker_platform)
    refold = run_dir is not None and _check_refold(run_dir, grader)
    merged, rounds, instances = grading_selection(run_dir, given)
    mirrors, specs = merged.repo_source, merged.repo_specs
    verdicts: list[Verdict] = []
    graded: list[tuple[Verdict, str]] = []  # each model verdict with the patch it graded
    found = validations if validations is not None else []
    for k, patches in enumerate(rounds or [{}]):  # a round per repeat: every attempt's own patch is graded
        got = grade_instances(
            instances if k == 0 else [i for i in instances if i.instance_id in patches],
            patches,
            grader,
            swebench_root(merged) / "grade",
            validate=options.validate_patches and k == 0,
            keep_images=options.keep_images,
            mirrors=Path(mirrors) if mirrors else None,
            repo_specs=Path(specs) if specs else None,
            repo_cache=swebench_root(merged) / "repo-cache",
            docker_platform=platform,
            offline=bool(merged.offline),
            found=found,
        )
        verdicts += got
        graded += [
            (v, patches[v.instance_id]) for v in got if v.patch == "model" and v.instance_id in patches
        ]
    scrubber = Scrubber()
    out = (
        None
        if run_dir is None
        else write_grades(run_dir / f"grades-{grader}.json", grader, verdicts, scrubber)
    )
    if refold:
        assert run_dir is not None
        _refold(run_dir, grader, graded)
    return grader, verdicts, out


def _given(value: Any) -> bool:
    """Whether an option was set (a seed of 0 was; an unset flag, None or "" was not)."""
    return value is not None and value != "" and value is not False


def grading_selection(
    run_dir: Path | None, given: SwebenchGradeOptions | Mapping[str, Any]
) -> tuple[SwebenchGradeOptions, list[dict[str, str]], list[SwebenchInstance]]:
    """What ``assay eval tasks swebench [DIR]`` grades: the options (DIR's recorded settings, then the
    command's), DIR's predicted patches in rounds (round k holds each instance's k-th distinct patch: a run
    with repeats has one per attempt), and the instances they choose (DIR's own unless the command chose)."""
    from assay.evals.tasks._swebench_data import read_prediction_lines

    command = given.model_dump(by_alias=True) if isinstance(given, SwebenchGradeOptions) else dict(given)
    recorded: dict[str, Any] = {}
    if run_dir is not None and (run_dir / SETTINGS).is_file():
        recorded = json.loads((run_dir / SETTINGS).read_text(encoding="utf-8"))
    merged = {k: v for k, v in recorded.items() if _given(v)}
    merged.update({k: v for k, v in command.items() if _given(v)})
    merged.setdefault("seed", None)  # this command has its own --seed: the seed of its --sample (default 0)
    if not command.get("instances") and recorded.get("instances") and merged.get("sample") is None:
        merged["instances"] = ",".join(recorded["instances"])
    rounds: list[dict[str, str]] = []
    if run_dir is not None:
        every: dict[str, list[str]] = {}
        for row in read_prediction_lines(run_dir / PREDICTIONS):
            mine = every.setdefault(row["instance_id"], [])
            if row["model_patch"] not in mine:
                mine.append(row["model_patch"])
        depth = max((len(p) for p in every.values()), default=0)
        rounds = [{i: p[k] for i, p in every.items() if k < len(p)} for k in range(depth)]
        if not merged.get("instances") and merged.get("sample") is None:
            merged["instances"] = ",".join(every)
    elif not command.get("validate"):
        raise ConfigError("RUN_DIR is required (the run whose predictions.jsonl to grade), unless --validate")
    settings = _grade_options(merged)
    return settings, rounds, choose(settings)


def _check_refold(run_dir: Path, grader: str) -> bool:
    """Whether DIR is a swebench run whose scorecard takes these verdicts: one ungraded (--no-evaluate) or graded
    by the same grader; one graded by the other grader is refused before anything runs (never mixed)."""
    from assay.runs import load_meta
    from assay.runs.rundir import JOURNAL, META

    if not (run_dir / META).is_file() or not (run_dir / JOURNAL).is_file():
        return False
    meta = load_meta(run_dir)
    if meta.benchmark != "tasks" or meta.suite != "swebench":
        raise ConfigError(
            f"a {meta.benchmark} {meta.suite} run, not an eval tasks --suite swebench run", path=str(run_dir)
        )
    had = meta.config.extra.get("grader")
    if had not in (None, "ungraded", grader):
        raise ConfigError(
            f"{run_dir} was graded by grader: {had}; grader: {grader} verdicts are never mixed into its "
            f"scorecard: grade it with --grader {had}, or start a new run"
        )
    return True


def _refold(run_dir: Path, grader: str, graded: list[tuple[Verdict, str]]) -> None:
    """The run's ungraded attempts take the verdicts (the same rule as at run time), its suite version and
    config take the grader, and its scorecard and reports are folded again."""
    from assay._util import Scrubber
    from assay.exec import rebuild, refold
    from assay.runs import latest_attempts, load_meta, read_journal
    from assay.runs.rundir import JOURNAL, META, write_model

    meta = load_meta(run_dir)
    recorded = dict(meta.options)
    recorded["benchmark"] = {**recorded.get("benchmark", {}), "no_evaluate": False, "grader": grader}
    write_model(run_dir / META, meta.model_copy(update={"options": recorded}), None)
    bench, suite, meta = rebuild(run_dir)  # the suite loads again, now with its grader
    extra = {**meta.config.extra, "grader": grader}
    meta = meta.model_copy(
        update={
            "suite_version": suite.version,
            "config": meta.config.model_copy(update={"extra": extra}),
        }
    )
    write_model(run_dir / META, meta, Scrubber(extra_values=bench.secret_values()))
    by_patch = {(v.instance_id, patch[:DIFF_KEEP]): v for v, patch in graded if patch.strip()}
    updated = []
    for att in latest_attempts(read_journal(run_dir / JOURNAL)).values():
        # the verdict of this attempt's own prediction (an empty diff already failed)
        v = by_patch.get((att.case_id, str(att.details.get("diff") or "")))
        if v is None:
            continue
        if att.status is not Status.SKIPPED and att.details.get("grader") != grader:
            continue
        out = _outcome(v, dict(att.details), att.usage, dict(att.metrics))
        updated.append(
            att.model_copy(
                update={"status": out.status, "skip_reason": out.skip_reason, "details": out.details}
            )
        )
    bench.regraded = {(att.case_id, att.iteration): att for att in updated}  # type: ignore[attr-defined]  # a TasksBenchmark
    refold(run_dir, bench, suite=suite)
