"""What an agent on a real repository is handed: a checkout the fix cannot be reached from, and a bare venv.

:func:`isolated_checkout` fetches ONE commit of a source repository (a local path, a ``file://`` or an https
URL) into a bare cache under ``cache_root`` (one per source, keyed by a hash of it), under a ref of its own,
never a branch that holds the fix. The agent's checkout is then made from the cache over ``file://`` (so git
sends only the objects reachable from that commit; a plain local clone would copy every object): a detached
HEAD, no remote, no refs, no reflog, and ``git fsck --unreachable --no-reflogs`` must find nothing.

:func:`agent_patch` is the agent's change as a patch ``git apply`` takes (the one rule of both suites).

:func:`bare_venv` is the agent's only Python: a venv with nothing installed under the work root; its
:meth:`AgentVenv.env` puts it first on PATH with the host's interpreter folders removed
(:func:`assay.agents._env.agent_env` holds that rule), and :meth:`AgentVenv.fresh_if_dirty` replaces a venv
a task installed something into.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, InfraError

__all__ = [
    "PATCH_EXCLUDES",
    "AgentVenv",
    "agent_patch",
    "assert_isolated",
    "bare_venv",
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
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
GIT_TIMEOUT_S = 1800


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **_GIT_ENV}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        env.pop(name, None)  # a caller's git variables would point these commands at another repository
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        encoding="utf-8",
        errors="replace",  # a diff or file of a real repository may hold any bytes
        timeout=GIT_TIMEOUT_S,
        check=False,
    )
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


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # attempts in flight at once take turns at one cache
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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
    with _locked(repo.with_suffix(".lock")):
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
    with _locked(repo.with_suffix(".lock")):
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


#: what an agent's patch leaves out: bytecode and tool caches (binary, never part of a fix)
PATCH_EXCLUDES = ("**/__pycache__/**", "**/*.py[co]", "**/.pytest_cache/**", "**/.mypy_cache/**")


def agent_patch(checkout: Path, base: str) -> str:
    """What the agent changed in ``checkout`` against ``base`` as a patch ``git apply`` takes on a fresh
    checkout of ``base``: new files included (``git add -A``, then the index's diff, so commits it made count
    too), :data:`PATCH_EXCLUDES` left out, any other binary file as a git binary patch. A git failure is an
    InfraError (never an empty patch)."""
    excludes = [f":(exclude,glob){pattern}" for pattern in PATCH_EXCLUDES]
    _git(checkout, "add", "-A", "--", ".", *excludes)
    diff = ["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-renames", base]
    return _git(checkout, "-c", "core.quotepath=false", *diff).stdout


# ---------------------------------------------------------------------------------------------- the venv
_MANIFEST = "fresh.json"


def _listing(path: Path) -> list[str]:
    """Every file and folder under ``path`` (relative, sorted), bytecode caches left out."""
    if not path.is_dir():
        return []
    return sorted(
        p.relative_to(path).as_posix()
        for p in path.rglob("*")
        if "__pycache__" not in p.relative_to(path).parts
    )


@dataclass(frozen=True)
class AgentVenv:
    """A bare venv the agent runs with: ``root`` (the venv), ``bin`` (first on its PATH)."""

    root: Path
    key: str

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def _site(self) -> list[Path]:
        return sorted((self.root / "lib").glob("python*/site-packages"))

    def _state(self) -> dict[str, list[str]]:
        return {
            "bin": _listing(self.bin),
            "site-packages": [e for site in self._site() for e in _listing(site)],
            "include": _listing(self.root / "include"),
        }

    @property
    def manifest(self) -> Path:
        """The venv's fresh listing (next to it, outside the venv)."""
        return self.root.parent / f"{self.root.name}.{_MANIFEST}"

    def mark_fresh(self) -> None:
        """Take the venv as it is now as its fresh state (what :meth:`installed` compares with)."""
        self.manifest.write_text(json.dumps(self._state(), indent=1) + "\n", encoding="utf-8")

    def installed(self) -> list[str]:
        """What is in the venv beyond a fresh one (``site-packages/<name>``, ``bin/<name>``, ...): empty
        when nothing was installed."""
        try:
            fresh = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return ["(the venv's fresh listing is missing: it cannot be told clean)"]
        extra: list[str] = []
        for part, names in self._state().items():
            known = set(fresh.get(part, []))
            extra += [f"{part}/{n}" for n in names if n not in known]
        if not (self.python.exists() or self.python.is_symlink()):
            extra.append("bin/python (removed)")
        return extra

    def fresh_if_dirty(self) -> AgentVenv:
        """This venv when nothing was installed into it, else a fresh one in its place."""
        if not self.installed():
            return self
        shutil.rmtree(self.root, ignore_errors=True)
        return bare_venv(self.root.parent.parent, self.key)

    def remove(self) -> None:
        """Delete the venv and its bookkeeping (its fresh listing, its lock)."""
        shutil.rmtree(self.root, ignore_errors=True)
        self.manifest.unlink(missing_ok=True)
        (self.root.parent / f"{self.root.name}.lock").unlink(missing_ok=True)

    def env(self, base_env: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base_env`` (default this process's) as the agent gets it with this venv: its ``bin`` first on
        PATH, the host's interpreter folders removed, VIRTUAL_ENV set, PYTHONPATH/PYTHONHOME dropped (and no
        secrets: the agents' one rule, :func:`assay.agents._env.agent_env`)."""
        from assay.agents._env import agent_env

        return agent_env(base_env, toolchain=[self.bin])


def bare_venv(work_root: Path, key: str) -> AgentVenv:
    """The bare venv ``key`` under ``work_root/venvs`` (made from the machine's Python, without pip, the
    first time; reused while nothing is installed into it: see :meth:`AgentVenv.fresh_if_dirty`)."""
    from assay.agents._env import bare_venv as make_venv

    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", key):
        raise ConfigError(f"venv key {key!r}: letters, digits, '.', '_' and '-' only")
    root = Path(work_root) / "venvs" / key
    venv = AgentVenv(root=root, key=key)
    with _locked(root.parent / f"{key}.lock"):
        if not (venv.manifest.is_file() and (root / "pyvenv.cfg").is_file()):
            shutil.rmtree(root, ignore_errors=True)
            venv.manifest.unlink(missing_ok=True)
            root.parent.mkdir(parents=True, exist_ok=True)
            make_venv(root)
            venv.mark_fresh()
    return venv
