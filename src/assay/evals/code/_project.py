"""One ``eval/code/<name>/`` project: its request, the files the agent starts from, and its hidden tests.

    eval/code/<name>/case.yaml      request, kind (fix | refuse), category, fails_before, invariants
    eval/code/<name>/project/       what the agent's copy starts as (its visible tests under tests/)
    eval/code/<name>/hidden/        files laid over the finished copy only after the agent exits
    eval/code/<name>/reference.yaml the reference agent's scripted replies (the pr suite; proves it solvable)

``fails_before`` names the tests that must fail on the untouched project with the hidden files laid over
it, and they alone: every other test passes, so the project fails for the right reason. A ``refuse``
project asks for something impossible or unsafe: its hidden tests guard what a compliant agent would break.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from assay.errors import ConfigError
from assay.evals._workspace import (
    COPY_IGNORE,
    TEST_CONFIG,
    check_env,
    expand_paths,
    git,
    grader_copy,
    junit_passed,
    lay_back,
    run_process,
    snapshot,
)
from assay.evals._yaml_lines import line_at, load_with_lines, strip_lines, validation_error

__all__ = [
    "CodeProject",
    "PreparedProject",
    "TestRun",
    "default_code_dir",
    "load_projects",
    "prepare_project",
    "run_hidden_tests",
]

CASE_FILE = "case.yaml"
PROJECT_DIR = "project"
HIDDEN_DIR = "hidden"
REFERENCE_FILE = "reference.yaml"
PYTEST_TIMEOUT_S = 120.0


class CaseSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request: str = Field(min_length=1)
    kind: Literal["fix", "refuse"] = "fix"
    category: str = "default"
    #: node ids that fail before the agent works (hidden files laid over), and only these
    fails_before: list[str] = Field(min_length=1)
    #: files or globs that must not change (the visible tests under tests/ always count)
    invariants: list[str] = Field(default_factory=list)
    #: a refuse project: words one of which a refusal names (why it is impossible or unsafe), so that a
    #: ramble that happens to say "not possible" is no correct refusal (case-insensitive substrings)
    refusal_mentions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _mentions(self) -> CaseSpec:
        if self.kind == "refuse" and not self.refusal_mentions:
            raise ValueError("a refuse project needs refusal_mentions (what a refusal names)")
        if self.kind == "fix" and self.refusal_mentions:
            raise ValueError("refusal_mentions belong to a refuse project")
        return self


@dataclass
class CodeProject:
    id: str
    root: Path
    spec: CaseSpec
    #: the hidden files, relative path -> bytes (read at load; never in the agent's copy)
    hidden: dict[str, bytes]
    #: the reference agent's scripted replies
    reference: list[dict[str, object]]
    #: the project's own test configuration (conftest.py, pytest.ini, ...: :data:`TEST_CONFIG`), read at load:
    #: the hidden tests run with it, whatever the agent added or changed
    test_config: dict[str, bytes] = field(default_factory=dict)

    @property
    def invariant_patterns(self) -> list[str]:
        return ["tests/", *self.spec.invariants]


@dataclass
class PreparedProject:
    project: CodeProject
    workdir: Path
    head: str
    #: invariant files -> bytes at the start (in memory, out of the agent's reach)
    snapshot: dict[str, bytes] = field(default_factory=dict)


@dataclass
class TestRun:
    """pytest on a copy with the hidden files laid over: exit code (None: timed out), node results."""

    exit_code: int | None
    results: dict[str, bool]
    summary: str

    def failed(self) -> list[str]:
        return sorted(n for n, ok in self.results.items() if not ok)


def default_code_dir() -> Path:
    """``eval/code`` of the working directory, else of the source checkout this package lives in."""
    here = Path.cwd() / "eval" / "code"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[4] / "eval" / "code"


def _load_yaml(path: Path) -> tuple[object, dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=str(path)) from exc
    return load_with_lines(text, str(path))


def load_project(root: Path) -> CodeProject:
    """The project in ``root``, validated; ConfigError naming the file and line of the first problem."""
    case_file = root / CASE_FILE
    data, lines = _load_yaml(case_file)
    if not isinstance(data, dict):
        raise ConfigError("must be a mapping (request, kind, fails_before, ...)", path=str(case_file), line=1)
    try:
        spec = CaseSpec.model_validate(strip_lines(data))
    except ValidationError as exc:
        raise validation_error(exc, case_file, data, lines) from exc
    for i, node in enumerate(spec.fails_before):
        if "::" not in node:
            raise ConfigError(
                f"fails_before: {node!r} is not a test node id (file.py::test)",
                path=str(case_file),
                line=line_at(data, ("fails_before", i), lines),
            )
    if not (root / PROJECT_DIR).is_dir():
        raise ConfigError(f"no {PROJECT_DIR}/ folder next to it", path=str(case_file))
    hidden_root = root / HIDDEN_DIR
    hidden = {
        p.relative_to(hidden_root).as_posix(): p.read_bytes()
        for p in sorted(hidden_root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    if not hidden:
        raise ConfigError(f"no hidden test file under {HIDDEN_DIR}/", path=str(case_file))
    ref_file = root / REFERENCE_FILE
    ref, _ = _load_yaml(ref_file)
    replies = strip_lines(ref.get("replies") if isinstance(ref, dict) else ref)
    if not isinstance(replies, list) or not replies:
        raise ConfigError(
            "must hold a non-empty list of replies (replies: [...])", path=str(ref_file), line=1
        )
    config = snapshot(root / PROJECT_DIR, TEST_CONFIG)
    return CodeProject(
        id=root.name, root=root, spec=spec, hidden=hidden, reference=replies, test_config=config
    )


def load_projects(directory: Path) -> list[CodeProject]:
    """Every project under ``directory`` (a folder holding ``case.yaml``), sorted by name."""
    if not directory.is_dir():
        raise ConfigError("--projects-dir: not a folder", path=str(directory))
    found = [load_project(p) for p in sorted(directory.iterdir()) if (p / CASE_FILE).is_file()]
    if not found:
        raise ConfigError(f"no project (a folder with {CASE_FILE}) in it", path=str(directory))
    return found


def prepare_project(project: CodeProject, work_root: Path) -> PreparedProject:
    """A fresh git copy of ``project/`` under ``work_root`` (one commit) and the invariants' snapshot."""
    work_root.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"{project.id}-", dir=work_root)) / project.id
    shutil.copytree(project.root / PROJECT_DIR, workdir, ignore=COPY_IGNORE)
    git(workdir, "init", "-q", "-b", "main")
    git(workdir, "add", "-A")
    git(workdir, "commit", "-q", "-m", project.id)
    head = git(workdir, "rev-parse", "HEAD").strip()
    snapshot = {p: (workdir / p).read_bytes() for p in expand_paths(workdir, project.invariant_patterns)}
    return PreparedProject(project=project, workdir=workdir, head=head, snapshot=snapshot)


def run_hidden_tests(
    project: CodeProject, tree: Path, python: str | None = None, *, fence: bool = False
) -> TestRun:
    """pytest on a copy of ``tree`` with the hidden files and the project's own test configuration laid over
    it (an agent's file of the same name is replaced, a conftest.py it added removed) and no link out of the
    copy (:func:`~assay.evals._workspace.grader_copy`); the agent's copy itself is never touched. ``fence``:
    pytest (which runs the agent's modules) under bubblewrap, reaching nothing outside the copy."""
    with tempfile.TemporaryDirectory(prefix="assay-code-tests-") as tmp:
        copy = Path(tmp) / "project"
        grader_copy(tree, copy)
        lay_back(copy, project.test_config, TEST_CONFIG)
        for rel, data in project.hidden.items():
            target = copy / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        xml = Path(tmp) / "junit.xml"
        argv = [python or sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}"]
        # the projects use plain pytest: no installed plugin loads (half of pytest's start-up time)
        env = check_env(copy, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
        code, output = run_process(argv, copy, PYTEST_TIMEOUT_S, env, fence=Path(tmp) if fence else None)
        results = junit_passed(xml)
    tail = [ln for ln in output.strip().splitlines() if ln.strip()]
    summary = tail[-1].strip("= ") if tail else ""
    if code is None:
        summary = f"pytest did not finish in {PYTEST_TIMEOUT_S:g} s"
    return TestRun(exit_code=code, results=results, summary=summary)


def check_fails_before(project: CodeProject) -> TestRun:
    """Run the untouched project with the hidden files laid over; ConfigError unless exactly the
    ``fails_before`` tests fail (collected, failed) and every other test passes."""
    run = run_hidden_tests(project, project.root / PROJECT_DIR)
    where = str(project.root / CASE_FILE)
    if run.exit_code != 1:
        raise ConfigError(
            f"pytest before the agent must fail its tests (exit 1), got exit {run.exit_code}: {run.summary}",
            path=where,
        )
    missing = [n for n in project.spec.fails_before if n not in run.results]
    if missing:
        raise ConfigError(f"fails_before: not collected before the agent: {', '.join(missing)}", path=where)
    passing = [n for n in project.spec.fails_before if run.results[n]]
    if passing:
        raise ConfigError(f"fails_before: passes before the agent: {', '.join(passing)}", path=where)
    other = [n for n in run.failed() if n not in project.spec.fails_before]
    if other:
        raise ConfigError(f"fails before the agent but not in fails_before: {', '.join(other)}", path=where)
    return run
