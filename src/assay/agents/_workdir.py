"""The guardrails of an agent's workdir: every path a tool is given stays inside it.

:class:`Workdir` resolves a tool's path argument inside the workdir and refuses ``..`` escapes, absolute paths
outside it and symlinks that lead outside (the path is resolved, then checked). A refusal is a
:class:`PathRefused` whose message becomes the tool call's status (``refused: <why>``) and the tool result the
model sees, so the run goes on.

:meth:`Workdir.check_command` is a *best-effort* check of a shell command's text: it refuses commands that name
an absolute path outside the workdir or a ``..`` component. A shell can always build a path the check cannot see
(``cd $(printf ..)``, variables, scripts): the real boundary is the fence (bubblewrap, ``--fence``); this only
stops the plain cases and tells the model why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from assay.errors import ConfigError

__all__ = ["PathRefused", "Workdir", "changed_paths", "snapshot"]

#: absolute paths a shell command may name although they are outside the workdir
ALLOWED_ABSOLUTE = ("/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr")
#: folders whose churn is not an edit (test caches, bytecode, version control)
IGNORED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
#: a workdir snapshot stops counting after this many files (a huge tree is not walked on every call)
SNAPSHOT_LIMIT = 20_000

# an absolute path in a command: a "/" not preceded by a word character, a dot, a colon or another slash
# (so "a/b", "./x", "../y" and "http://h/p" are not taken for one)
_ABSOLUTE = re.compile(r"(?<![\w.:/~$-])/[^\s'\";|&<>()`]*")
# a ".." path component anywhere in a command
_DOTDOT = re.compile(r"(?:^|[\s/=:'\"<>|;&(`])\.\.(?=$|[/\s'\";|&<>)`])")
# "~user" names another user's home (plain "~" is the workdir: HOME is set to it)
_OTHER_HOME = re.compile(r"(?:^|[\s=:'\"<>|;&(`])~[A-Za-z_]")


class PathRefused(Exception):
    """A tool argument that would leave the workdir; ``str(exc)`` is the reason the model is told."""


class Workdir:
    """An agent's working directory and the checks that keep tool calls inside it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        path = Path(root)
        if not path.is_dir():
            raise ConfigError("the agent's workdir is not a directory (--workdir)", path=str(path))
        self.root = path.resolve()

    def resolve(self, arg: str | None, *, must_exist: bool = False) -> Path:
        """The absolute, symlink-resolved path ``arg`` names, inside the workdir, or :class:`PathRefused`."""
        text = "." if arg is None or str(arg).strip() == "" else str(arg)
        if "\0" in text:
            raise PathRefused("refused: a path with a NUL byte")
        if text == "~" or text.startswith("~/"):  # HOME is the workdir for everything the agent runs
            text = "." + text[1:]
        given = Path(text)
        candidate = given if given.is_absolute() else self.root / given
        lexical = Path(os.path.normpath(candidate))
        if not self._inside(lexical):
            if given.is_absolute():
                raise PathRefused(f"refused: absolute path {text!r} is outside the workdir")
            raise PathRefused(f"refused: {text!r} escapes the workdir ('..')")
        resolved = lexical.resolve()
        if not self._inside(resolved):
            raise PathRefused(f"refused: {text!r} is a symlink that leads outside the workdir")
        if must_exist and not resolved.exists():
            raise FileNotFoundError(f"no such file or directory: {text}")
        return resolved

    def relative(self, path: Path) -> str:
        """``path`` (inside the workdir) relative to it, with forward slashes; ``.`` for the root."""
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    def is_inside(self, path: Path) -> bool:
        """Whether ``path``, symlinks resolved, is inside the workdir."""
        return self._inside(path.resolve())

    def _inside(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents

    def check_command(self, command: str) -> None:
        """Refuse a shell command that names a path outside the workdir (best effort; see the module doc)."""
        if _DOTDOT.search(command):
            raise PathRefused("refused: the command has a '..' path component (the workdir is the limit)")
        if _OTHER_HOME.search(command):
            raise PathRefused("refused: the command names another user's home directory")
        for match in _ABSOLUTE.finditer(command):
            path = match.group(0)
            if path in ALLOWED_ABSOLUTE:
                continue
            if not self._inside(Path(os.path.normpath(path)).resolve()):
                raise PathRefused(
                    f"refused: the command names {path!r}, an absolute path outside the workdir"
                )

    def shell_env(self, base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
        """The environment of a command the agent runs: ``base`` and ``extra`` with HOME and PWD the workdir."""
        env = {**base, **extra}
        env["HOME"] = str(self.root)
        env["PWD"] = str(self.root)
        return env

    def walk(self, start: Path) -> Iterator[Path]:
        """Files under ``start`` (sorted, ignored folders skipped), never following a symlink out."""
        for dirpath, dirnames, filenames in os.walk(start):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and self.is_inside(here / d))
            for name in sorted(filenames):
                path = here / name
                if self.is_inside(path):
                    yield path


Snapshot = dict[str, tuple[int, int]]


def snapshot(workdir: Workdir) -> Snapshot:
    """``relative path -> (mtime_ns, size)`` of the workdir's files, to tell what a command changed."""
    seen: Snapshot = {}
    for path in workdir.walk(workdir.root):
        try:
            st = path.stat()
        except OSError:
            continue
        seen[workdir.relative(path)] = (st.st_mtime_ns, st.st_size)
        if len(seen) >= SNAPSHOT_LIMIT:
            break
    return seen


def changed_paths(before: Snapshot, after: Snapshot) -> list[str]:
    """Files created, changed or deleted between two snapshots, sorted."""
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
