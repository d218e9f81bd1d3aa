"""Where a case is replayed: the recorded repository at the recorded commit, in an isolated checkout, or a copy.

The recorded working directory (mapped with ``--cwd-map OLD=NEW`` when the repository moved) inside a git
repository with the case's commit gives an isolated checkout of that commit under the work root, built the
way the SWE-bench suite builds its own (:func:`assay.evals._isolate.isolated_checkout`: the commit fetched
alone from the user's repository into a bare cache, then into a fresh repository with no refs, no remote,
and nothing ``git fsck`` finds beyond it): a later commit, which may hold the recorded fix, is not
reachable from the replay, by ``git log --all`` or any other command. The user's repository is only read.
A directory without git, or whose commit is gone, is copied. A directory that is not on this machine, or
whose checkout cannot be built, cannot be replayed: the case is SKIPPED with the reason.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, InfraError
from assay.evals._isolate import checkout_problem, isolated_checkout
from assay.evals._workspace import COPY_IGNORE, run_git

__all__ = ["Workspace", "map_cwd", "parse_cwd_map", "prepare_workspace"]

#: under the work root: the bare caches the replay checkouts are fetched from (one per repository)
CACHE = "replay-cache"


@dataclass
class Workspace:
    workdir: Path
    #: how it was made, for the journal: "isolated checkout of REPO at COMMIT" or "a copy of DIR"
    how: str
    scratch: Path | None = None

    def remove(self) -> None:
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
        commit = run_git(src, "rev-parse", f"{commit}^{{commit}}").stdout.strip()  # the full id
        scratch = Path(tempfile.mkdtemp(prefix="replay-", dir=work_root)) / repo.name
        try:
            isolated_checkout(repo, commit, scratch, work_root / CACHE)
        except (ConfigError, InfraError) as exc:
            shutil.rmtree(scratch.parent, ignore_errors=True)
            return checkout_problem(exc)
        rel = src.resolve().relative_to(repo.resolve())
        return Workspace(scratch / rel, f"isolated checkout of {repo} at {commit[:12]}", scratch=scratch)
    scratch = Path(tempfile.mkdtemp(prefix="replay-", dir=work_root)) / src.name
    shutil.copytree(src, scratch, ignore=COPY_IGNORE, symlinks=True)
    why = "not a git repository" if top.returncode != 0 else f"commit {commit or '(none recorded)'} not in it"
    return Workspace(scratch, f"a copy of {src} ({why})", scratch=scratch)
