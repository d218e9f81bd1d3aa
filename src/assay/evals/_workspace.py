"""The workspace of the coding benchmarks (tasks, code, sessions): git, copy rules, the one diff rule, the
processes that check a finished copy, and the toolchain every harness is handed.

- :func:`run_git` runs git with a clean environment (a caller's ``GIT_DIR`` never points it elsewhere);
  :func:`git` with the fixed identity and dates, so the same project gives the same commits everywhere.
- :data:`COPY_IGNORE` is what a copy of a project leaves out; :func:`expand_paths` the files patterns name;
  :func:`changed_files` what changed against a snapshot taken in memory, out of the agent's reach.
- :func:`agent_patch` is THE diff rule: what the agent changed against a commit (new files included, commits it
  made too, caches left out), as a patch ``git apply`` takes; :func:`agent_diff` is the journal's view of it,
  cut at :data:`DIFF_KEEP` by :func:`keep_diff`.
- :func:`run_process`, :func:`check_env` and :func:`junit_passed` run a check (pytest, a probe) on a copy.
- The toolchain: :func:`bare_venv` (the agent's only Python, a venv with nothing installed, replaced when a
  run installed into it) and :func:`cached_toolchain` (a bare venv holding only pytest), plus the offline
  ``gh`` of :mod:`assay.agents` (put on the same PATH by the benchmark).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, InfraError

__all__ = [
    "COPY_IGNORE",
    "DIFF_KEEP",
    "PATCH_EXCLUDES",
    "TEST_CONFIG",
    "TOOLCHAIN_DISTRIBUTIONS",
    "AgentVenv",
    "agent_diff",
    "agent_patch",
    "bare_venv",
    "cached_toolchain",
    "changed_files",
    "check_env",
    "expand_paths",
    "git",
    "grader_copy",
    "junit_passed",
    "keep_diff",
    "lay_back",
    "locked",
    "run_git",
    "run_process",
    "snapshot",
    "toolchain_venv",
]

#: never copied from a source project (build and cache leftovers of someone running its tests)
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".toybox_cache", ".git")
#: characters of a diff kept in the journal (the judge is shown less)
DIFF_KEEP = 20000
#: what an agent's patch leaves out: bytecode and tool caches (binary, never part of a fix)
PATCH_EXCLUDES = ("**/__pycache__/**", "**/*.py[co]", "**/.pytest_cache/**", "**/.mypy_cache/**")
#: what the toolchain venv holds: pytest and what it imports
TOOLCHAIN_DISTRIBUTIONS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")
GIT_TIMEOUT_S = 1800
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
#: fixed identity and dates: the same project gives the same commits on every machine
_IDENTITY = {
    "GIT_AUTHOR_NAME": "toybox",
    "GIT_AUTHOR_EMAIL": "toybox@example.invalid",
    "GIT_COMMITTER_NAME": "toybox",
    "GIT_COMMITTER_EMAIL": "toybox@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


# ---------------------------------------------------------------------------------------------- git
def run_git(cwd: Path, *args: str, identity: bool = False) -> subprocess.CompletedProcess[str]:
    """git ``args`` in ``cwd`` (never raising on its exit code); with ``identity``, as the fixed author with
    ``HOME`` set to ``cwd``. Output is decoded leniently: a diff of a real repository may hold any bytes."""
    env = {**os.environ, **_GIT_ENV}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        env.pop(name, None)  # a caller's git variables would point these commands at another repository
    if identity:
        env.update({**_IDENTITY, "HOME": str(cwd)})
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        timeout=GIT_TIMEOUT_S,
        check=False,
    )


def git(workdir: Path, *args: str, check: bool = True) -> str:
    """Run git in ``workdir`` with the fixed identity; its stdout (RuntimeError when it fails and ``check``)."""
    proc = run_git(workdir, *args, identity=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {workdir}: {proc.stderr.strip()}")
    return proc.stdout


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (made if missing): attempts in flight at once take turns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------------- files
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


def changed_files(root: Path, patterns: list[str], snapshot: Mapping[str, bytes]) -> list[str]:
    """The files ``patterns`` name that were added, removed or changed (byte for byte) against ``snapshot``
    (relative path -> bytes, taken at the start): ``added P``, ``removed P``, ``changed P``."""
    now = expand_paths(root, patterns)
    problems = [f"added {p}" for p in now if p not in snapshot]
    for path, before in snapshot.items():
        target = root / path
        if not target.is_file():
            problems.append(f"removed {path}")
        elif target.read_bytes() != before:
            problems.append(f"changed {path}")
    return problems


# ---------------------------------------------------------------------------------------------- the diff
def keep_diff(text: str) -> str:
    """``text`` as the journal keeps it: its first :data:`DIFF_KEEP` characters, and how many more there were."""
    if len(text) <= DIFF_KEEP:
        return text
    return text[:DIFF_KEEP] + f"\n[... {len(text) - DIFF_KEEP} more characters]"


def _staged(checkout: Path) -> None:
    excludes = [f":(exclude,glob){pattern}" for pattern in PATCH_EXCLUDES]
    _checked(checkout, "add", "-A", "--", ".", *excludes)


def _checked(cwd: Path, *args: str) -> str:
    proc = run_git(cwd, "-c", "core.quotepath=false", *args)
    if proc.returncode != 0:
        raise InfraError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[-800:]}")
    return proc.stdout


def agent_patch(checkout: Path, base: str, *, exclude: tuple[str, ...] = ()) -> str:
    """What the agent changed in ``checkout`` against ``base``, as a patch ``git apply`` takes on a fresh
    checkout of ``base``: new files included (``git add -A``, then the index's diff, so commits it made count
    too), :data:`PATCH_EXCLUDES` left out, any other binary file as a git binary patch. ``exclude`` leaves more
    paths out of the patch (pathspecs). A git failure is an InfraError (never an empty patch)."""
    _staged(checkout)
    diff = ["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-renames", base]
    return _checked(checkout, *diff, "--", ".", *(f":(exclude){p}" for p in exclude))


def agent_diff(checkout: Path, base: str, *, exclude: tuple[str, ...] = ()) -> tuple[str, bool]:
    """The journal's view of the change :func:`agent_patch` takes (the same files against the same base): its
    stat and patch without ``exclude`` (a big log the setup planted), a note when the agent moved HEAD, cut by
    :func:`keep_diff`; and whether the agent changed anything."""
    if run_git(checkout, "cat-file", "-e", f"{base}^{{commit}}").returncode != 0:
        # the agent rewrote history and pruned the commit: its doing, recorded as such (never an outage)
        return (
            f"(the agent removed commit {base[:12]}, the one its change is diffed against: history rewritten)",
            True,
        )
    moved = run_git(checkout, "rev-parse", "HEAD").stdout.strip() != base
    _staged(checkout)
    view = ["diff", "--cached", "--stat", "--patch", "--no-color", "--no-ext-diff", "--no-renames", base]
    diff = _checked(checkout, *view, "--", ".", *(f":(exclude){p}" for p in exclude))
    if moved:
        diff = f"(the agent moved HEAD from {base[:12]})\n" + diff
    return keep_diff(diff), bool(diff.strip())


# ---------------------------------------------------------------------------------------------- checks
def run_process(
    argv: list[str],
    cwd: Path,
    timeout_s: float,
    env: dict[str, str],
    *,
    fence: Path | None = None,
    binds_ro: list[Path] | tuple[Path, ...] = (),
) -> tuple[int | None, str]:
    """Exit code (None on timeout, the process group killed) and the combined output.

    ``fence``: a grader's folder (holding ``cwd``, the copy) to run in under bubblewrap, read-write, with this
    Python's venv and ``binds_ro`` read-only and no network: a check runs the agent's code (its modules, a
    conftest.py it planted), which then reaches nothing on the host either."""
    if fence is not None:
        from assay.agents.fence import fenced_command

        venvs = [Path(sys.prefix)]  # this Python's venv, and the one the command's interpreter belongs to
        if (Path(argv[0]).parent.parent / "pyvenv.cfg").is_file():
            venvs.append(Path(argv[0]).parent.parent)
        argv = fenced_command(
            argv, fence, binds_ro=[*venvs, *binds_ro], env=env, home=env.get("HOME"), chdir=cwd
        )
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as out:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            code: int | None = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        out.seek(0)
        return code, out.read()


def check_env(project: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a check's process: the copy importable and its home; its temporary files next to
    the copy (removed with it). No secret and no provider setting (the agent's rule): a check runs the agent's
    code (its module, a conftest.py it planted), which must find no key there either."""
    from assay.agents import is_secret_env_name

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "TOYBOX_")) and not is_secret_env_name(k)
    }
    tmp = project.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    env.update(
        {"PYTHONPATH": str(project), "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(project), "TMPDIR": str(tmp)}
    )
    return {**env, **(extra or {})}


#: what configures how pytest (or Python) runs a project: a grader of a benchmark whose projects need none of
#: the agent's lays them back to their start (a planted conftest.py can turn every failure into a pass)
TEST_CONFIG = (
    "conftest.py", "**/conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
    "sitecustomize.py", "usercustomize.py",
)  # fmt: skip


def snapshot(root: Path, patterns: tuple[str, ...] | list[str]) -> dict[str, bytes]:
    """The files ``patterns`` name under ``root``, relative path -> bytes (taken before the agent starts)."""
    return {p: (root / p).read_bytes() for p in expand_paths(root, list(patterns))}


def lay_back(copy: Path, before: Mapping[str, bytes], patterns: tuple[str, ...] | list[str]) -> list[str]:
    """In a grader's copy, the files ``patterns`` name put back as ``before`` holds them (one the agent added
    removed); the paths laid back."""
    now = expand_paths(copy, list(patterns))
    changed = [p for p in now if p not in before or (copy / p).read_bytes() != before[p]]
    changed += [p for p in before if p not in now]
    for rel in changed:
        target = copy / rel
        if target.is_symlink() or target.exists():
            target.unlink()
        if rel in before:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(before[rel])
    return sorted(set(changed))


def grader_copy(workdir: Path, dest: Path) -> list[str]:
    """Copy the finished ``workdir`` to ``dest`` for a check (symlinks kept as links), then remove every link
    that leads out of the copy: a grader never follows the agent out of its workdir (a link to the gold
    solution, to a file the agent could not read). The links removed, relative."""
    shutil.copytree(workdir, dest, ignore=COPY_IGNORE, symlinks=True)
    root = dest.resolve()
    dropped = []
    for path in sorted(dest.rglob("*")):
        if path.is_symlink() and not Path(os.path.realpath(path)).is_relative_to(root):
            path.unlink()
            dropped.append(path.relative_to(dest).as_posix())
    return dropped


def junit_passed(xml_path: Path) -> dict[str, bool]:
    """node id -> passed, from pytest's junit XML (functions in test files: ``tests/x.py::test_y[p]``)."""
    if not xml_path.is_file():
        return {}
    out: dict[str, bool] = {}
    for case in ET.parse(xml_path).iter("testcase"):
        module, name = case.get("classname", ""), case.get("name", "")
        node = module.replace(".", "/") + ".py::" + name
        out[node] = not any(child.tag in ("failure", "error", "skipped") for child in case)
    return out


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
        secrets: the agents' one rule, :func:`assay.agents.agent_env`)."""
        from assay.agents import agent_env

        return agent_env(base_env, toolchain=[self.bin])


def bare_venv(work_root: Path, key: str) -> AgentVenv:
    """The bare venv ``key`` under ``work_root/venvs`` (made from the machine's Python, without pip, the
    first time; reused while nothing is installed into it: see :meth:`AgentVenv.fresh_if_dirty`)."""
    from assay.agents import bare_venv as make_venv

    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", key):
        raise ConfigError(f"venv key {key!r}: letters, digits, '.', '_' and '-' only")
    root = Path(work_root) / "venvs" / key
    venv = AgentVenv(root=root, key=key)
    with locked(root.parent / f"{key}.lock"):
        if not (venv.manifest.is_file() and (root / "pyvenv.cfg").is_file()):
            shutil.rmtree(root, ignore_errors=True)
            venv.manifest.unlink(missing_ok=True)
            root.parent.mkdir(parents=True, exist_ok=True)
            make_venv(root)
            venv.mark_fresh()
    return venv


def _make_toolchain(root: Path) -> Path:
    """A bare venv with pytest (copied from this interpreter's install) and nothing else; its ``bin``."""
    import importlib.metadata as md

    from assay.agents import bare_venv as make_venv

    bin_dir = make_venv(root / "venv")
    site = next((root / "venv" / "lib").glob("python*/site-packages"))
    for name in TOOLCHAIN_DISTRIBUTIONS:
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError as exc:
            raise ConfigError(f"the tasks toolchain needs {name} installed where assay runs") from exc
        for file in dist.files or []:
            src = Path(str(dist.locate_file(file)))
            if file.parts[0] in ("..", "bin") or not src.is_file():
                continue  # console scripts are made below, for the venv's own python
            dest = site / file
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    pytest = bin_dir / "pytest"
    pytest.write_text(f'#!/bin/sh\nexec "{bin_dir / "python"}" -m pytest "$@"\n', encoding="utf-8")
    pytest.chmod(0o755)
    return bin_dir


def toolchain_venv(work_root: Path) -> AgentVenv:
    """The toolchain venv under ``work_root`` (one per interpreter and pytest version)."""
    import importlib.metadata as md
    import sys

    key = f"toolchain-py{sys.version_info.major}.{sys.version_info.minor}-pytest{md.version('pytest')}"
    return AgentVenv(root=work_root / key / "venv", key=key)


def cached_toolchain(work_root: Path) -> Path:
    """The toolchain (a bare venv holding only pytest) under ``work_root``, made once per interpreter and
    pytest version and then reused while nothing was installed into it (a dirtied one is made anew); its
    ``bin``."""
    venv = toolchain_venv(work_root)
    root = venv.root.parent
    done = root / "ready"
    if done.is_file() and not venv.manifest.is_file():
        venv.mark_fresh()  # made before venvs kept their fresh listing: taken as it is
    if not done.is_file() or venv.installed():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        _make_toolchain(root)
        venv.mark_fresh()
        done.write_text("ok\n", encoding="utf-8")
    return venv.bin
