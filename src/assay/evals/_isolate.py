"""What an agent on a real repository is handed: a checkout the fix cannot be reached from, and a bare venv.

:func:`isolated_checkout` fetches ONE commit of a source repository (a local path, a ``file://`` or an https
URL) into a bare cache under ``cache_root`` (one per source, keyed by a hash of it), under a ref of its own,
never a branch that holds the fix. The agent's checkout is then made from the cache over ``file://`` (so git
sends only the objects reachable from that commit; a plain local clone would copy every object): a detached
HEAD, no remote, no refs, no reflog, and ``git fsck --unreachable --no-reflogs`` must find nothing beyond
the historical-format findings git itself tolerates (:data:`TOLERATED_FSCK`). The SWE-bench suite, realfix
and ``eval sessions``' replay all build their checkouts here.

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
    "TOLERATED_FSCK",
    "NotIsolated",
    "assert_isolated",
    "cache_repo",
    "checked_git",
    "checkout_problem",
    "fetch_commit",
    "fsck_findings",
    "has_commit",
    "isolated_checkout",
    "isolation_problems",
    "source_url",
]

#: ``git fsck`` message ids for the format of old objects (a malformed timezone, date, name or email in an
#: author line, a zero-padded or odd file mode, a full path in a tree, a tag without a tagger, ...): real
#: repositories hold such commits (psf/requests has a bad timezone), git fetches and checks them out, and
#: none of them is an object the checkout should not have. Each is ignored by the isolation check.
TOLERATED_FSCK = (
    "badDate", "badDateOverflow", "badEmail", "badFilemode", "badName", "badTimezone", "emptyName",
    "extraHeaderEntry", "fullPathname", "missingEmail", "missingNameBeforeEmail", "missingSpaceBeforeDate",
    "missingSpaceBeforeEmail", "missingTaggerEntry", "multipleAuthors", "zeroPaddedDate", "zeroPaddedFilemode",
)  # fmt: skip


class NotIsolated(InfraError):
    """A checkout holds something beyond its commit (a ref, a remote, an unreachable object)."""


def checkout_problem(exc: Exception) -> str:
    """Why an isolated checkout could not be made, as a NOT_RUN reason (one line)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"the checkout cannot be built: {first[:600]}"


_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
#: git's words for "the source has no such commit" (anything else failing a fetch is the source unreachable)
_MISSING = ("not our ref", "couldn't find remote ref", "no such remote ref", "unadvertised object")
#: the cache's ref a fetched commit is kept under (never a branch: the clone asks for the commit by id)
PIN_REFS = "refs/assay/pins/"


def checked_git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
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
    if (repo / "assay-source").is_file():
        return repo
    repo.mkdir(parents=True, exist_ok=True)
    with locked(repo.with_suffix(".lock")):  # attempts side by side make it once
        if not (repo / "assay-source").is_file():
            checked_git(repo, "init", "-q", "--bare")
            checked_git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
            checked_git(repo, "config", "gc.auto", "0")
            (repo / "assay-source").write_text(url + "\n", encoding="utf-8")  # written last: it is ready
    return repo


def has_commit(repo: Path, sha: str) -> bool:
    return checked_git(repo, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def fetch_commit(
    source: str | Path, commit: str, cache_root: Path, *, depth: int | None = None, offline: bool = False
) -> Path:
    """Fetch only ``commit`` of ``source`` into its cache (with ``depth``: that many commits of history) under
    ``refs/assay/pins/<commit>``; the cache. A commit the source lacks is a ConfigError naming both; a source
    that cannot be reached is an InfraError."""
    url = source_url(source)
    sha = _check_sha(commit, url)
    repo = cache_repo(url, cache_root)
    with locked(repo.with_suffix(".lock")):
        shallow = checked_git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        if has_commit(repo, sha) and (depth is not None or not shallow):
            return repo
        if offline and not url.startswith("file://"):  # --offline: a remote source is never asked
            raise ConfigError(
                f"--offline: {url} {sha[:12]} is not in the repository cache {repo}; run once without "
                "--offline, or give --repo-source DIR"
            )
        args = ["fetch", "-q", "--no-tags", "--no-write-fetch-head"]
        if depth is not None:
            args.append(f"--depth={depth}")
        elif shallow:
            args.append("--unshallow")
        proc = checked_git(repo, *args, url, f"{sha}:{PIN_REFS}{sha}", check=False)
        if proc.returncode != 0:
            why = proc.stderr.strip()
            if any(m in why.lower() for m in _MISSING):
                raise ConfigError(f"{url}: commit {sha} is not in the repository ({why.splitlines()[-1]})")
            raise InfraError(f"{url}: could not fetch commit {sha}: {why[-800:]}")
        if not has_commit(repo, sha):
            raise ConfigError(f"{url}: {sha} is not a commit")
    return repo


def isolated_checkout(
    source: str | Path,
    commit: str,
    dest: Path,
    cache_root: Path,
    *,
    depth: int | None = None,
    offline: bool = False,
) -> Path:
    """A working tree of ``source`` at ``commit`` in ``dest`` (which must not exist or be empty) holding only
    ``commit`` and its history (``depth`` commits of it when given): detached HEAD, no remote, no refs, no
    reflog. Raises :class:`NotIsolated` (an InfraError) naming the repository and commit when
    :func:`isolation_problems` finds anything; a source or commit that cannot be had is a ConfigError or an
    InfraError (see :func:`fetch_commit`); with ``offline`` a remote source is never asked (a commit not in
    its cache is a ConfigError)."""
    url = source_url(source)
    sha = _check_sha(commit, url)
    repo = fetch_commit(url, sha, cache_root, depth=depth, offline=offline)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise ConfigError(f"checkout folder {dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    checked_git(dest, "init", "-q")
    args = ["fetch", "-q", "--no-tags", "--no-write-fetch-head"]
    if depth is not None:
        args.append(f"--depth={depth}")
    with locked(repo.with_suffix(".lock")):
        checked_git(dest, *args, repo.resolve().as_uri(), sha)
    checked_git(dest, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", sha)
    for ref in checked_git(dest, "for-each-ref", "--format=%(refname)").stdout.split():
        checked_git(dest, "update-ref", "-d", ref)  # init may leave none; a future git might
    for name in checked_git(dest, "remote").stdout.split():
        checked_git(dest, "remote", "remove", name)
    checked_git(dest, "reflog", "expire", "--expire=now", "--all")
    shutil.rmtree(dest / ".git" / "logs", ignore_errors=True)
    (dest / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
    assert_isolated(dest, url, sha)
    return dest


def fsck_findings(dest: Path) -> list[str]:
    """What ``git fsck --unreachable --no-reflogs`` says of ``dest``, less the historical-format findings git
    itself tolerates (:data:`TOLERATED_FSCK`): every line left is unreachable or dangling (an object beyond
    the commit), a broken object or link, or a notice (e.g. no HEAD)."""
    ignore = [arg for msg in TOLERATED_FSCK for arg in ("-c", f"fsck.{msg}=ignore")]
    fsck = checked_git(dest, *ignore, "fsck", "--unreachable", "--no-reflogs", "--no-progress", check=False)
    found = [line for line in (fsck.stdout + fsck.stderr).splitlines() if line.strip()]
    if fsck.returncode != 0 and not found:
        found = [f"git fsck exited {fsck.returncode}"]
    return found


def isolation_problems(dest: Path) -> list[str]:
    """Why the checkout at ``dest`` is not isolated (empty: it is): a ref, a remote, an alternate object
    store, a reflog, or anything :func:`fsck_findings` reports (an object no commit of HEAD's reaches)."""
    out = [f"ref {r}" for r in checked_git(dest, "for-each-ref", "--format=%(refname)").stdout.split()]
    out += [f"remote {r}" for r in checked_git(dest, "remote").stdout.split()]
    if (dest / ".git" / "objects" / "info" / "alternates").is_file():
        out.append("an alternate object store (objects/info/alternates)")
    if (dest / ".git" / "logs").exists():
        out.append("a reflog (.git/logs)")
    return out + fsck_findings(dest)


def assert_isolated(dest: Path, source: str, commit: str) -> None:
    """Raise :class:`NotIsolated` naming ``source`` and ``commit`` unless :func:`isolation_problems` finds
    nothing in the checkout at ``dest``."""
    problems = isolation_problems(dest)
    if problems:
        raise NotIsolated(
            f"{source} at {commit}: the checkout {dest} is not isolated: {'; '.join(problems)[:800]}"
        )
