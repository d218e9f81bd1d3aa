"""A task's own copy of the toybox project: a fresh git repository with the task's setups applied.

:func:`prepare_task` copies ``eval/tasks/toybox/`` into a new folder under ``work_root``, commits it, applies
the setups (each committed, except the user's uncommitted edits, which stay uncommitted) and takes the
snapshot the ``unchanged`` and ``keep_uncommitted`` checks compare with. The snapshot is kept in memory in
the :class:`PreparedTask`, never on disk where the agent could reach it; the probes and planted files stay
in ``eval/tasks/`` and are read only by the checks, after the agent exits.
"""

from __future__ import annotations

import fnmatch
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.evals._workspace import COPY_IGNORE, expand_paths, git
from assay.evals.tasks._setups import UNCOMMITTED_SETUPS, apply_setup
from assay.evals.tasks._task import Task

__all__ = ["PreparedTask", "in_scope", "prepare_task"]


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
