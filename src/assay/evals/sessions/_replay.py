"""Where a case is replayed: the recorded repository at the recorded commit, in a scratch worktree, or a copy.

The recorded working directory (mapped with ``--cwd-map OLD=NEW`` when the repository moved) inside a git
repository with the case's commit gives ``git worktree add --detach`` of that commit under the work root (the
user's checkout is never touched; the worktree is removed after). A directory without git, or whose commit
is gone, is copied. A directory that is not on this machine cannot be replayed: the case is SKIPPED.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError
from assay.evals._workspace import COPY_IGNORE, run_git

__all__ = ["Workspace", "map_cwd", "parse_cwd_map", "prepare_workspace"]

#: git's worktree commands are not safe side by side on one repository (two adds race to create
#: .git/worktrees); attempts prepare their workspaces in threads, so they take turns here
_WORKTREE_LOCK = threading.Lock()


@dataclass
class Workspace:
    workdir: Path
    #: how it was made, for the journal: "worktree of REPO at COMMIT" or "a copy of DIR"
    how: str
    repo: Path | None = None
    scratch: Path | None = None

    def remove(self) -> None:
        if self.repo is not None and self.scratch is not None:
            with _WORKTREE_LOCK:
                run_git(self.repo, "worktree", "remove", "--force", str(self.scratch))
                run_git(self.repo, "worktree", "prune")
        if self.scratch is not None:
            shutil.rmtree(self.scratch.parent, ignore_errors=True)


def parse_cwd_map(items: tuple[str, ...] | list[str] | None) -> list[tuple[str, str]]:
    out = []
    for item in items or []:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            raise ConfigError(f"--cwd-map {item!r}: give OLD=NEW (a recorded directory and where it is now)")
        out.append((old.rstrip("/"), new.rstrip("/")))
    return out


def map_cwd(cwd: str | None, mapping: list[tuple[str, str]]) -> str | None:
    if cwd is None:
        return None
    for old, new in mapping:
        if cwd == old or cwd.startswith(old + "/"):
            return new + cwd[len(old) :]
    return cwd


def prepare_workspace(cwd: str | None, commit: str | None, work_root: Path) -> Workspace | str:
    """The workspace for a case, or why there is none (the case is skipped with it)."""
    if not cwd:
        return "the session records no working directory"
    src = Path(cwd)
    if not src.is_dir():
        return f"the recorded working directory {cwd} is not on this machine (map it with --cwd-map OLD=NEW)"
    work_root.mkdir(parents=True, exist_ok=True)
    top = run_git(src, "rev-parse", "--show-toplevel")
    if (
        top.returncode == 0
        and commit
        and run_git(src, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0
    ):
        repo = Path(top.stdout.strip())
        scratch = Path(tempfile.mkdtemp(prefix="replay-", dir=work_root)) / repo.name
        with _WORKTREE_LOCK:
            added = run_git(repo, "worktree", "add", "--detach", str(scratch), commit)
        if added.returncode != 0:
            raise ConfigError(f"git worktree add failed in {repo}: {added.stderr.strip()}")
        rel = src.resolve().relative_to(repo.resolve())
        return Workspace(scratch / rel, f"worktree of {repo} at {commit[:12]}", repo=repo, scratch=scratch)
    scratch = Path(tempfile.mkdtemp(prefix="replay-", dir=work_root)) / src.name
    shutil.copytree(src, scratch, ignore=COPY_IGNORE, symlinks=True)
    why = "not a git repository" if top.returncode != 0 else f"commit {commit or '(none recorded)'} not in it"
    return Workspace(scratch, f"a copy of {src} ({why})", scratch=scratch)
