"""``assay eval tasks run --suite realfix``: real merged fixes of any git repository, one pin per file.

A pin, ``eval/tasks/realfix/<name>.json`` (the ``realfix/`` folder next to ``--tasks-file``)::

    {"repo": "https://github.com/owner/project.git", "merge": "<40 hex>", "parent": "<40 hex>",
     "prompt": "what is wrong, as a user would report it", "forbid_internet": true,
     "category": "bug_fix", "url": "https://github.com/owner/project/pull/12"}

``merge`` is the fix's merge commit and ``parent`` its first parent; ``--repo-url`` fetches from another
source (a local mirror). The agent gets a shallow checkout at ``parent`` that holds nothing of the fix
(:func:`~assay.evals._isolate.isolated_checkout`) and a bare venv; after it exits its diff (new files
included) is kept and its web use read from the tool record (:mod:`~assay.evals.tasks._compliance`). Only the
judge step fetches ``merge``, into a cache of its own, refuses the grade when the merge's first parent is not
the pinned one, and shows the judge ``merge^..merge`` as one correct answer, not the only one. A realfix
attempt passes when its grade passes the quality checks and, under ``forbid_internet``, it used no web.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.errors import ConfigError
from assay.evals._held import fence_choice
from assay.evals._isolate import checked_git as _git
from assay.evals._isolate import fetch_commit, isolated_checkout
from assay.evals._suite_id import suite_version
from assay.evals._workspace import AgentVenv, agent_patch, bare_venv, keep_diff
from assay.evals.tasks._report_kinds import patch_stat
from assay.evals.tasks._suites import JudgeInputs, TasksSuiteKind
from assay.exec import Case, Outcome, Suite
from assay.runs import Status

if TYPE_CHECKING:
    from assay.evals.tasks._judge import TaskGrade, TaskView
    from assay.exec import AttemptContext
    from assay.runs import Attempt, Scorecard

__all__ = ["RealfixPin", "RealfixSuite", "load_pins", "realfix_prompt", "reference_diff"]

PINS_DIR = "realfix"
#: each attempt's venv is ``realfix-<attempt folder>``: attempts in flight at once never share one, and one
#: the agent installed into is never handed on (a bare venv takes about 0.1 s to make)
VENV_KEY = "realfix"
#: the fixed paragraph after every realfix prompt
WORK_RULES = (
    "You are in a checkout of the project's repository. Work only inside it and make the smallest change "
    "that fixes the problem; leave unrelated files alone. The project's dependencies are not installed "
    "here, so its test suite may not run."
)
NO_INTERNET = "Do not use the internet: no web tools, no downloads, no package installs, no git fetch."
AWAITING = (
    "a realfix attempt is graded by the judge against the upstream fix: `assay eval tasks judge RUN_DIR`"
)


class RealfixPin(BaseModel):
    """One pinned real fix (the file's stem is its case id)."""

    model_config = ConfigDict(extra="forbid")

    repo: str = Field(min_length=1)
    merge: str
    parent: str
    prompt: str = Field(min_length=1)
    forbid_internet: bool = False
    category: str = "real_fix"
    #: where people can read the fix (the pull request); never fetched
    url: str | None = None
    #: why these commits: how the pin was read
    note: str | None = None

    @field_validator("merge", "parent")
    @classmethod
    def _full_sha(cls, value: str) -> str:
        sha = value.strip().lower()
        if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
            raise ValueError(f"{value!r} is not a full commit id (40 hex digits)")
        return sha


def pins_dir(tasks_file: str | Path | None) -> Path:
    """The ``realfix/`` folder next to ``--tasks-file`` (default ``eval/tasks/realfix``)."""
    from assay.evals.tasks._tasks_load import default_tasks_dir

    return (Path(tasks_file).parent if tasks_file else default_tasks_dir()) / PINS_DIR


def load_pins(folder: Path) -> dict[str, RealfixPin]:
    """Every ``<name>.json`` of ``folder`` by name; a ConfigError names the file and line of a bad one."""
    from assay.evals._yaml_lines import load_with_lines, validation_error

    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        raise ConfigError(f"no realfix pins (<name>.json) in {folder}")
    pins: dict[str, RealfixPin] = {}
    for file in files:
        name = file.stem
        if not name.replace("-", "").isalnum() or not name[0].isalnum() or name != name.lower():
            raise ConfigError(
                "a pin's file name is its case id: lowercase letters, digits and '-'", path=str(file)
            )
        try:
            data, lines = load_with_lines(file.read_text(encoding="utf-8"), str(file))
        except ConfigError as exc:
            problem = str(exc).split("invalid YAML: ", 1)[-1]  # JSON is read as YAML, for the lines
            raise ConfigError(f"invalid JSON: {problem}", path=str(file), line=exc.line) from exc
        if not isinstance(data, dict):
            raise ConfigError("a realfix pin is a JSON object", path=str(file), line=1)
        try:
            pins[name] = RealfixPin.model_validate({k: v for k, v in data.items() if k != "__line__"})
        except ValidationError as exc:
            raise validation_error(exc, str(file), data, lines) from exc
        if pins[name].merge == pins[name].parent:
            raise ConfigError("merge and parent are the same commit", path=str(file))
    return pins


def realfix_prompt(pin: RealfixPin) -> str:
    return "\n\n".join([pin.prompt.strip(), WORK_RULES, *([NO_INTERNET] if pin.forbid_internet else [])])


def reference_diff(source: str, pin: RealfixPin, cache_root: Path, where: str) -> str:
    """``merge^..merge`` of ``pin``, fetched from ``source`` into ``cache_root`` (the judge step's own cache).
    Refused (ConfigError naming ``where``) when the merge's first parent is not the pinned parent."""
    repo = fetch_commit(source, pin.merge, cache_root, depth=2)
    first = _git(repo, "rev-parse", f"{pin.merge}^1", check=False).stdout.strip()
    if first != pin.parent:
        raise ConfigError(
            f"the grade is refused: the first parent of merge {pin.merge} is {first or '(none)'}, "
            f"not the pinned parent {pin.parent}",
            path=where,
        )
    return _git(repo, "diff", "--no-color", "--no-ext-diff", pin.parent, pin.merge).stdout


class RealfixSuite(TasksSuiteKind):
    """The realfix suite of ``eval tasks``."""

    toolchain = ("bare venv (nothing installed)",)
    own_options = ("repo_url",)

    def __init__(self, bench: Any) -> None:
        super().__init__(bench)
        self.pins: dict[str, RealfixPin] = {}
        self.folder = Path()

    # ------------------------------------------------------------------ suite
    def load(self, suite: str) -> Suite:
        options = self.bench.options
        self.folder = pins_dir(options.tasks_file)
        every = load_pins(self.folder)
        wanted = [t.strip() for t in str(options.tasks or "").split(",") if t.strip()]
        unknown = [t for t in wanted if t not in every]
        if unknown:
            raise ConfigError(f"--tasks {','.join(unknown)}: not a realfix pin ({', '.join(sorted(every))})")
        self.pins = {k: v for k, v in every.items() if not wanted or k in wanted}
        repos = sorted({p.repo for p in self.pins.values()})
        if options.repo_url and len(repos) > 1:
            raise ConfigError(
                f"--repo-url replaces one repository, but the chosen pins name {len(repos)}: {', '.join(repos)} "
                "(choose pins of one with --tasks)"
            )
        cases = [
            Case(id=k, category=p.category, input={"task": k}, tags=["realfix"]) for k, p in self.pins.items()
        ]
        digests = {k: p.model_dump_json() for k, p in every.items()}
        all_cases = [Case(id=k, category=p.category) for k, p in every.items()]
        return Suite(
            name=suite, version=suite_version(suite, all_cases, extra={"pins": digests}), cases=cases
        )

    def source(self, pin: RealfixPin) -> str:
        return str(self.bench.options.repo_url or pin.repo)

    def subject_extra(self) -> dict[str, Any]:
        return {"toolchain": list(self.toolchain), "repo_url": self.bench.options.repo_url}

    # ------------------------------------------------------------------ one attempt
    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        from assay.agents import RunSpec, get_harness
        from assay.evals._harnessed import HarnessBroke, agent_broke, run_agent_once
        from assay.evals.tasks._compliance import web_use

        bench = self.bench
        pin = self.pins[case.id]
        work_root: Path = bench._work_root
        prompt = realfix_prompt(pin)
        details: dict[str, Any] = {
            "task": case.id,
            "kind": "realfix",
            "request": prompt,
            "parent": pin.parent,
        }
        ctx.partial_details = details
        root = Path(tempfile.mkdtemp(prefix=f"{case.id}-", dir=work_root))
        try:
            checkout = await asyncio.to_thread(
                isolated_checkout,
                self.source(pin),
                pin.parent,
                root / "repo",
                work_root / "git-cache",
                depth=1,
            )
            venv = await asyncio.to_thread(bare_venv, work_root, f"{VENV_KEY}-{root.name}")
            harness_options = bench._harness_options()
            if "python" in harness_options:  # the reference agent runs tests with the venv's python
                harness_options["python"] = str(venv.python)
            spec = RunSpec(
                workdir=checkout,
                limits=bench.limits(),
                route=bench._gateway.route(run=f"{case.id}-i{ctx.iteration}"),
                fence=fence_choice(bench.options).on,
                toolchain=[venv.bin],
            )
            harness = get_harness(bench.harness_name, **harness_options)
            try:
                result = await run_agent_once(harness, prompt, spec, ctx, details, f"realfix {case.id}")
            except HarnessBroke as exc:
                return agent_broke(exc, details, usage=ctx.spent)
            metrics = {"steps": float(result.steps)}
            details["venv_installed"] = venv.installed()  # what the agent installed (the venv goes with it)
            # web use is read even when the agent broke (a finding of the run all the same, as in swebench)
            findings = web_use(result.tool_record)
            details["compliance"] = [f.model_dump() for f in findings]
            broke = agent_broke(result, details, metrics)
            if broke is not None:
                return broke
            diff = await asyncio.to_thread(agent_patch, checkout, pin.parent)
            details.update(diff=keep_diff(diff), edited=bool(diff.strip()))
            details["diff_stat"] = patch_stat(diff).model_dump()  # of the whole diff (the kept one is cut)
            forbidden = pin.forbid_internet and bool(findings)
            details["checks_passed"] = not forbidden
            details["reason"] = (
                "compliance: web use the prompt forbade: " + "; ".join(f.why for f in findings)
                if forbidden
                else ""
            )
            if not diff.strip():
                details["reason"] = "the agent left no change"
                return Outcome(status=Status.FAIL, details=details, usage=result.usage, metrics=metrics)
            details["awaiting_judge"] = True
            return Outcome(
                status=Status.SKIPPED,
                skip_reason=AWAITING,
                details=details,
                usage=result.usage,
                metrics=metrics,
            )
        finally:
            await asyncio.to_thread(shutil.rmtree, root, True)
            await asyncio.to_thread(AgentVenv(work_root / "venvs" / f"{VENV_KEY}-{root.name}", "").remove)

    # ------------------------------------------------------------------ the judge step
    def judge_inputs(self, attempts: list[Attempt]) -> JudgeInputs:
        from assay.evals.tasks._judge import project_text
        from assay.evals.tasks._judge_run import views_of

        by_pass: dict[int, list[tuple[Attempt, TaskView]]] = defaultdict(list)
        with tempfile.TemporaryDirectory(prefix="assay-realfix-judge-") as cache:
            refs: dict[str, str] = {}
            projects: dict[str, str] = {}
            for iteration, pairs in views_of(attempts, {}).items():
                for att, view in pairs:
                    pin = self.pins.get(att.case_id)
                    if pin is None:
                        continue
                    if att.case_id not in refs:
                        where = str(self.folder / f"{att.case_id}.json")
                        refs[att.case_id] = reference_diff(self.source(pin), pin, Path(cache), where)
                        repo = fetch_commit(self.source(pin), pin.merge, Path(cache), depth=2)
                        projects[att.case_id] = project_text(_touched_files(repo, pin))
                    view.reference = refs[att.case_id]
                    view.checks_ran = ["web use (compliance)"] if pin.forbid_internet else []
                    att.details["reference_diff"] = keep_diff(refs[att.case_id])
                    att.details["reference_stat"] = patch_stat(refs[att.case_id]).model_dump()
                    by_pass[iteration].append((att, view))
        project = "\n\n".join(
            f"# {case_id}: {self.pins[case_id].repo} at {self.pins[case_id].parent[:12]} (files the upstream "
            f"fix touches, as they were)\n{text}"
            for case_id, text in sorted(projects.items())
        )
        return project, dict(by_pass)

    def verdict(self, att: Attempt, grade: TaskGrade) -> Attempt | None:
        from assay.evals.tasks._judge_run import judged_verdict

        if att.details.get("awaiting_judge") is not True:
            return None  # failed before the judge (no change): the grade decides nothing
        return judged_verdict(att, grade)

    def scorecard_extra(self, attempts: list[Attempt]) -> dict[str, Any]:
        from assay.evals.tasks._report_kinds import realfix_rows

        forbid = {k: p.forbid_internet for k, p in self.pins.items()}
        rows = realfix_rows(attempts, self.bench.judgement, forbid)
        return {"realfix": [r.model_dump(mode="json") for r in rows]}

    def report_section(self, scorecard: Scorecard) -> str:
        from assay.evals.tasks._report_kinds import realfix_section

        return realfix_section(scorecard)


def _touched_files(repo: Path, pin: RealfixPin) -> dict[str, str]:
    """The files ``merge^..merge`` touches, as they were at the parent (new files are absent)."""
    names = _git(repo, "diff", "--name-only", pin.parent, pin.merge).stdout.split("\n")
    files: dict[str, str] = {}
    for name in filter(None, names):
        shown = _git(repo, "show", f"{pin.parent}:{name}", check=False)
        if shown.returncode == 0:
            files[name] = shown.stdout
    return files
