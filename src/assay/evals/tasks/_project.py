"""A task's own copy of the toybox project: a fresh git repository with the task's setups applied.

:func:`prepare_task` copies ``eval/tasks/toybox/`` into a new folder under ``work_root``, commits it, applies
the setups (each committed, except the user's uncommitted edits, which stay uncommitted) and takes the
snapshot the ``unchanged`` and ``keep_uncommitted`` checks compare with. The snapshot is kept in memory in
the :class:`PreparedTask`, never on disk where the agent could reach it; the probes and planted files stay
in ``eval/tasks/`` and are read only by the checks, after the agent exits.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.evals.tasks._setups import UNCOMMITTED_SETUPS, apply_setup
from assay.evals.tasks._task import Task

__all__ = ["PreparedTask", "expand_paths", "git", "in_scope", "prepare_task"]

#: never copied from the source project (build and cache leftovers of someone running its tests)
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".toybox_cache", ".git")
#: fixed identity and dates: the same project gives the same commits on every machine
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "toybox",
    "GIT_AUTHOR_EMAIL": "toybox@example.invalid",
    "GIT_COMMITTER_NAME": "toybox",
    "GIT_COMMITTER_EMAIL": "toybox@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@dataclass
class PreparedTask:
    """A task ready for the agent: where its copy is and what the checks compare the finished copy with."""

    task: Task
    #: the ``eval/tasks`` folder (probes and planted files; never inside the workdir)
    tasks_dir: Path
    #: the agent's copy: a git repository
    workdir: Path
    #: the commit of the pristine project and the commit after the setups
    base_commit: str
    head: str
    #: ``unchanged`` paths -> their bytes after setup (in memory only: out of the agent's reach)
    snapshot: dict[str, bytes] = field(default_factory=dict)
    #: ``keep_uncommitted`` paths -> their bytes after setup (the user's work)
    uncommitted: dict[str, bytes] = field(default_factory=dict)
    #: what the setups established (the big log's error count, ...), for probes and the judge
    facts: dict[str, Any] = field(default_factory=dict)
    #: what the setups changed in the pristine project, as a git diff (for the judge)
    setup_diff: str = ""


def git(workdir: Path, *args: str, check: bool = True) -> str:
    """Run git in ``workdir`` with the fixed identity; its stdout."""
    env = {**os.environ, **_GIT_ENV, "HOME": str(workdir)}
    proc = subprocess.run(["git", *args], cwd=workdir, env=env, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {workdir}: {proc.stderr.strip()}")
    return proc.stdout


def expand_paths(root: Path, patterns: list[str]) -> list[str]:
    """The files under ``root`` that ``patterns`` name (a path, a glob, or a folder ending in ``/``),
    relative and sorted; ``.git`` never counts."""
    found: set[str] = set()
    for pattern in patterns:
        if pattern.endswith("/"):
            base = root / pattern
            hits = [p for p in base.rglob("*")] if base.is_dir() else []
        elif any(ch in pattern for ch in "*?["):
            hits = list(root.glob(pattern))
        else:
            hits = [root / pattern]
        for p in hits:
            rel = p.relative_to(root).as_posix()
            if p.is_file() and not rel.startswith(".git/") and "__pycache__" not in rel:
                found.add(rel)
    return sorted(found)


def in_scope(path: str, scope: list[str]) -> bool:
    """Whether a project-relative ``path`` is one the request is about (an entry, a glob, or under a folder)."""
    path = path.removeprefix("./").rstrip("/")
    for entry in scope:
        if entry.endswith("/") and (path + "/").startswith(entry):
            return True
        if path == entry.rstrip("/") or fnmatch.fnmatch(path, entry):
            return True
    return False


def prepare_task(task: Task, project_src: Path, work_root: Path) -> PreparedTask:
    """Copy the project at ``project_src`` (``eval/tasks/toybox``) into a fresh folder under ``work_root``,
    make it a git repository (the pristine project is the first commit), apply ``task.setup`` in order
    (committed as one "setup" commit; ``user_edits`` are applied after it and left uncommitted) and take
    the snapshot of ``task.expect.unchanged`` and ``keep_uncommitted``. The planted files and probes are
    read from ``project_src.parent``; nothing of them is in the copy unless a setup plants it."""
    tasks_dir = project_src.resolve().parent
    work_root.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"{task.id}-", dir=work_root)) / "toybox"
    shutil.copytree(project_src, workdir, ignore=COPY_IGNORE)
    git(workdir, "init", "-q", "-b", "main")
    git(workdir, "add", "-A")
    git(workdir, "commit", "-q", "-m", "toybox")
    base = git(workdir, "rev-parse", "HEAD").strip()
    facts: dict[str, Any] = {}
    later = [s for s in task.setup if s.kind in UNCOMMITTED_SETUPS]
    for setup in task.setup:
        if setup.kind not in UNCOMMITTED_SETUPS:
            facts.update(apply_setup(workdir, setup, tasks_dir))
    if git(workdir, "status", "--porcelain"):
        git(workdir, "add", "-A")
        git(workdir, "commit", "-q", "-m", "setup: " + ", ".join(s.kind for s in task.setup))
    head = git(workdir, "rev-parse", "HEAD").strip()
    for setup in later:
        facts.update(apply_setup(workdir, setup, tasks_dir))
    # every changed file in the stat; the patch without the big log (named, not pasted)
    diff = git(workdir, "diff", base, "--stat") + git(
        workdir, "diff", base, "--", ".", ":(exclude)logs/*.log"
    )
    untracked = git(workdir, "ls-files", "--others", "--exclude-standard").split()
    if untracked:
        diff += "\nuntracked files: " + ", ".join(untracked) + "\n"
    expect = task.expect
    snapshot = {
        p: (workdir / p).read_bytes() for p in expand_paths(workdir, expect.unchanged if expect else [])
    }
    uncommitted = {
        p: (workdir / p).read_bytes()
        for p in expand_paths(workdir, expect.keep_uncommitted if expect else [])
    }
    return PreparedTask(
        task=task,
        tasks_dir=tasks_dir,
        workdir=workdir,
        base_commit=base,
        head=head,
        snapshot=snapshot,
        uncommitted=uncommitted,
        facts=facts,
        setup_diff=diff,
    )
