"""The git side of the loop: a clean tree, a scratch branch, the profile's diff, commit and revert.

Every command runs ``git -C <repo>`` with the user's git; a failing one is a ConfigError carrying its stderr.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from assay.errors import ConfigError

__all__ = [
    "changed_paths",
    "checkout_paths",
    "commit_paths",
    "create_branch",
    "current_branch",
    "diff_paths",
    "head_commit",
    "is_ignored",
    "refuse_dirty",
    "repo_root",
]


def _git(repo: Path, *args: str, check: bool = True) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, timeout=60
        )
    except FileNotFoundError:
        raise ConfigError("hillclimb needs git on PATH (it edits the agent on a scratch branch)") from None
    if check and proc.returncode != 0:
        raise ConfigError(
            f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc.stdout


def repo_root(path: Path) -> Path:
    """The git work tree ``path`` is in; a ConfigError when it is in none."""
    where = path if path.is_dir() else path.parent
    proc = subprocess.run(
        ["git", "-C", str(where), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ConfigError(
            "the profile folder is not in a git work tree: hillclimb edits it on a scratch branch",
            path=str(path),
        )
    return Path(proc.stdout.strip()).resolve()


def current_repo(path: Path) -> Path | None:
    """The git work tree holding the folder ``path``, or None outside any."""
    proc = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
    )
    return Path(proc.stdout.strip()).resolve() if proc.returncode == 0 else None


def changed_paths(repo: Path) -> list[str]:
    """Every tracked file changed (staged or not) and every untracked, unignored file, repo-relative."""
    out = _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    paths: list[str] = []
    entries = out.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if not entry:
            continue
        status, path = entry[:2], entry[3:]
        paths.append(path)
        if "R" in status or "C" in status:  # a rename carries its source next
            i += 1
    return sorted(paths)


def refuse_dirty(repo: Path) -> None:
    """ConfigError naming the dirty files when the work tree is not clean."""
    dirty = changed_paths(repo)
    if dirty:
        shown = ", ".join(dirty[:20]) + (f" and {len(dirty) - 20} more" if len(dirty) > 20 else "")
        raise ConfigError(
            f"the git tree is not clean ({len(dirty)} file(s): {shown}); commit or stash them first: "
            "hillclimb keeps or reverts each edit with git",
            path=str(repo),
        )


def current_branch(repo: Path) -> str:
    return _git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()


def head_commit(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD").strip()


def create_branch(repo: Path, name: str | None = None) -> str:
    """Create and switch to a new scratch branch (``hillclimb/<UTC time>`` unless named); returns its name."""
    branch = name or f"hillclimb/{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    exists = _git(repo, "branch", "--list", branch).strip()
    if exists:
        raise ConfigError(f"--branch {branch}: the branch exists already; name a new one")
    _git(repo, "switch", "-c", branch)
    return branch


def is_ignored(repo: Path, path: Path) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "-q", str(path)], capture_output=True, check=False
    )
    return proc.returncode == 0


def diff_paths(repo: Path, paths: list[str]) -> str:
    """The diff of ``paths`` against HEAD, new files included (shown as added)."""
    if not paths:
        return ""
    _git(repo, "add", "--intent-to-add", "--", *paths)
    try:
        return _git(repo, "diff", "--no-color", "HEAD", "--", *paths)
    finally:
        _git(repo, "reset", "-q", "--", *paths)


def commit_paths(repo: Path, paths: list[str], message: str) -> str:
    """Commit exactly ``paths`` (deletions included); returns the new commit."""
    _git(repo, "add", "-A", "--", *paths)
    # the user's own identity when git has one; a placeholder only where none is configured
    who = [] if _git(repo, "config", "user.email", check=False).strip() else [
        "-c", "user.name=assay hillclimb", "-c", "user.email=hillclimb@localhost"
    ]  # fmt: skip
    _git(repo, *who, "commit", "-q", "-m", message, "--", *paths)
    return head_commit(repo)


def checkout_paths(repo: Path, paths: list[str]) -> None:
    """Put ``paths`` back as HEAD has them: ``git checkout`` of the tracked ones, removal of the new ones."""
    tracked = set(_git(repo, "ls-files", "--", *paths).splitlines()) if paths else set()
    if tracked:
        _git(repo, "checkout", "HEAD", "--", *sorted(tracked))
    for rel in paths:
        if rel not in tracked:
            (repo / rel).unlink(missing_ok=True)
