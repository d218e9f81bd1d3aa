"""What an agent on a real repository is handed: a checkout the fix cannot be reached from, and a bare venv.

:func:`isolated_checkout` fetches ONE commit of a source repository (a local path, a ``file://`` or an https
URL) into a bare cache under ``cache_root`` (one per source, keyed by a hash of it), under a ref of its own,
never a branch that holds the fix. The agent's checkout is then made from the cache over ``file://`` (so git
sends only the objects reachable from that commit; a plain local clone would copy every object): a detached
HEAD, no remote, no refs, no reflog, and ``git fsck --unreachable --no-reflogs`` must find nothing.

The agent's change (``agent_patch``) and its bare venv (``bare_venv``) are the coding benchmarks' shared
workspace rules, in :mod:`assay.evals._workspace`.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

from assay.errors import ConfigError, InfraError
from assay.evals._workspace import locked, run_git

__all__ = [
    "assert_isolated",
    "cache_repo",
    "fetch_commit",
    "isolated_checkout",
    "source_url",
]

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
#: git's words for "the source has no such commit" (anything else failing a fetch is the source unreachable)
_MISSING = ("not our ref", "couldn't find remote ref", "no such remote ref", "unadvertised object")
#: the cache's ref a fetched commit is kept under (never a branch: the clone asks for the commit by id)
PIN_REFS = "refs/assay/pins/"


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = run_git(cwd, *args)
    if check and proc.returncode != 0:
        raise InfraError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[-800:]}")
    return proc


def source_url(source: str | Path) -> str:
    """``source`` as git is given it: a local path becomes an absolute ``file://`` URL (a plain path would
    let git copy the whole object store), a URL is kept. A local path that is no directory is a ConfigError."""
    text = str(source)
    if "://" in text or re.match(r"^[\w.-]+@[\w.-]+:", text):  # a URL or scp-like user@host:path
        return text
    path = Path(text).expanduser()
    if not path.is_dir():
        raise ConfigError(f"source repository {text}: no such folder")
    return path.resolve().as_uri()


def _check_sha(commit: str, source: str) -> str:
    sha = commit.strip().lower()
    if not _SHA.match(sha):
        raise ConfigError(f"{source}: commit {commit!r} is not a full commit id (40 hex digits)")
    return sha


def cache_repo(source: str | Path, cache_root: Path) -> Path:
    """The bare cache of ``source`` under ``cache_root`` (made empty on first use)."""
    url = source_url(source)
    repo = Path(cache_root) / (hashlib.sha256(url.encode()).hexdigest()[:20] + ".git")
    if not (repo / "HEAD").is_file():
        repo.mkdir(parents=True, exist_ok=True)
        _git(repo, "init", "-q", "--bare")
        _git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
        _git(repo, "config", "gc.auto", "0")
        (repo / "assay-source").write_text(url + "\n", encoding="utf-8")
    return repo


def _has_commit(repo: Path, sha: str) -> bool:
    return _git(repo, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def fetch_commit(source: str | Path, commit: str, cache_root: Path, *, depth: int | None = None) -> Path:
    """Fetch only ``commit`` of ``source`` into its cache (with ``depth``: that many commits of history) under
    ``refs/assay/pins/<commit>``; the cache. A commit the source lacks is a ConfigError naming both; a source
    that cannot be reached is an InfraError."""
    url = source_url(source)
    sha = _check_sha(commit, url)
    repo = cache_repo(url, cache_root)
    with locked(repo.with_suffix(".lock")):
        shallow = _git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        if _has_commit(repo, sha) and (depth is not None or not shallow):
            return repo
        args = ["fetch", "-q", "--no-tags", "--no-write-fetch-head"]
        if depth is not None:
            args.append(f"--depth={depth}")
        elif shallow:
            args.append("--unshallow")
        proc = _git(repo, *args, url, f"{sha}:{PIN_REFS}{sha}", check=False)
        if proc.returncode != 0:
            why = proc.stderr.strip()
            if any(m in why.lower() for m in _MISSING):
                raise ConfigError(f"{url}: commit {sha} is not in the repository ({why.splitlines()[-1]})")
            raise InfraError(f"{url}: could not fetch commit {sha}: {why[-800:]}")
        if not _has_commit(repo, sha):
            raise ConfigError(f"{url}: {sha} is not a commit")
    return repo


def isolated_checkout(
    source: str | Path, commit: str, dest: Path, cache_root: Path, *, depth: int | None = None
) -> Path:
    """A working tree of ``source`` at ``commit`` in ``dest`` (which must not exist or be empty) holding only
    ``commit`` and its history (``depth`` commits of it when given): detached HEAD, no remote, no refs, no
    reflog. Raises InfraError naming the repository and commit when ``git fsck --unreachable --no-reflogs``
    finds anything."""
    url = source_url(source)
    sha = _check_sha(commit, url)
    repo = fetch_commit(url, sha, cache_root, depth=depth)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise ConfigError(f"checkout folder {dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q")
    args = ["fetch", "-q", "--no-tags", "--no-write-fetch-head"]
    if depth is not None:
        args.append(f"--depth={depth}")
    with locked(repo.with_suffix(".lock")):
        _git(dest, *args, repo.resolve().as_uri(), sha)
    _git(dest, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", sha)
    for ref in _git(dest, "for-each-ref", "--format=%(refname)").stdout.split():
        _git(dest, "update-ref", "-d", ref)  # init may leave none; a future git might
    for name in _git(dest, "remote").stdout.split():
        _git(dest, "remote", "remove", name)
    _git(dest, "reflog", "expire", "--expire=now", "--all")
    shutil.rmtree(dest / ".git" / "logs", ignore_errors=True)
    (dest / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
    assert_isolated(dest, url, sha)
    return dest


def assert_isolated(dest: Path, source: str, commit: str) -> None:
    """Raise InfraError naming ``source`` and ``commit`` unless the checkout at ``dest`` has no ref, no remote
    and nothing ``git fsck --unreachable --no-reflogs`` reports."""
    fsck = _git(dest, "fsck", "--unreachable", "--no-reflogs", "--no-progress", check=False)
    found = (fsck.stdout + fsck.stderr).strip()
    refs = _git(dest, "for-each-ref", "--format=%(refname)").stdout.strip()
    remotes = _git(dest, "remote").stdout.strip()
    if fsck.returncode != 0 or found or refs or remotes:
        what = found or (f"refs {refs}" if refs else f"remotes {remotes}")
        raise InfraError(f"{source} at {commit}: the checkout {dest} is not isolated: {what[:800]}")
