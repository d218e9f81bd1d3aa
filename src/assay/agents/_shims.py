"""The program a fenced agent's harness names, as the fence must see it: version managers' shims resolved.

A ``shims`` folder (pyenv, asdf, rbenv, nodenv: ``ROOT/shims/python3``, a shell script that runs the manager,
which runs ``ROOT/versions/X/bin/python3``) works only where the manager's root is visible, and the fence shows
only what it binds. So under the fence a shim is resolved to the real program where its manager says which
(``pyenv which``, ``asdf which``), its installation bound read-only; a shim no manager resolves has its root
bound read-only instead, and so has every shim folder on the agent's PATH (the agent's own ``python3`` calls go
through them). A script's interpreter (``#!/usr/bin/env NAME``: an npm CLI under nvm's node; ``#!/venv/bin/python``)
has its install bound too.

    program, binds = resolve_program("/home/me/.pyenv/shims/python3", path=env["PATH"], cwd=workdir)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

__all__ = ["install_root", "resolve_program", "shim_roots"]

#: manager root -> the command (relative to the root) that prints the real program for a name
_WHICH = {"pyenv": ("libexec/pyenv", "which"), "asdf": ("bin/asdf", "which")}
_SYSTEM = (Path("/usr"),)


def _is_script(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return False


def shim_root(path: Path) -> Path | None:
    """The version manager's root when ``path`` is one of its shims (``ROOT/shims/NAME``, a script), else None."""
    return path.parent.parent if path.parent.name == "shims" and _is_script(path) else None


def shim_roots(path_var: str | None) -> list[Path]:
    """The roots of the shim folders on a PATH (``ROOT/shims``)."""
    roots = []
    for entry in (path_var or "").split(os.pathsep):
        folder = Path(entry)
        if entry and folder.name == "shims" and folder.is_dir():
            roots.append(folder.parent.resolve())
    return list(dict.fromkeys(roots))


def install_root(program: Path) -> Path | None:
    """What to bind for a real program: its venv, its installation (the folder above ``bin``), an npm
    package's ``node_modules``, or its own folder; None under ``/usr`` (bound anyway)."""
    folder = program.parent
    if any(folder == s or folder.is_relative_to(s) for s in _SYSTEM):
        return None
    if folder.name == ".bin" and folder.parent.name == "node_modules":
        return folder.parent  # an npm bin links into its package, which may start another package's binary
    if folder.name == "bin" and folder.parent != Path("/"):
        return folder.parent
    return folder


@lru_cache(maxsize=64)
def _manager_which(root: Path, name: str, cwd: str) -> str | None:
    """The real program a manager's shim ``name`` runs in ``cwd`` (its local version file counts), or None."""
    for manager, (tool, verb) in _WHICH.items():
        exe = root / tool
        if not exe.is_file():
            continue
        env = {**os.environ, f"{manager.upper()}_ROOT": str(root)}
        if manager == "asdf":
            env["ASDF_DATA_DIR"] = str(root)
        try:
            done = subprocess.run(
                [str(exe), verb, name], cwd=cwd, env=env, capture_output=True, text=True, timeout=15
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        found = done.stdout.strip().splitlines()
        if done.returncode == 0 and found and Path(found[-1]).is_file():
            return found[-1]
    return None


def _script_interpreter(script: Path, path_var: str | None) -> Path | None:
    """The interpreter a script names: ``#!/abs/python`` (a venv's), or NAME of ``#!/usr/bin/env NAME`` found on
    ``path_var``; None for a binary."""
    try:
        with open(script, "rb") as fh:
            first = fh.readline(256).decode("utf-8", "replace").split() if fh.read(2) == b"#!" else []
    except OSError:
        return None
    if not first:
        return None
    if first[0].endswith("/env"):
        words = [w for w in first[1:] if not w.startswith("-")]
        found = shutil.which(words[0], path=path_var) if words else None
        return Path(found) if found else None
    return Path(first[0]) if Path(first[0]).is_file() else None


def resolve_program(program: str, *, path: str | None, cwd: Path | str) -> tuple[str, list[Path]]:
    """``program`` as the fence runs it (a shim resolved to the real program where its manager says which)
    and the folders to bind read-only for it (see the module doc)."""
    binds: list[Path] = []
    given = Path(program)
    root = shim_root(given)
    if root is not None:
        real = _manager_which(root.resolve(), given.name, str(Path(cwd).resolve()))
        if real is None:
            binds.append(root.resolve())  # the shim runs as it is, its manager's root visible
            return program, binds
        given = Path(real)
    resolved = Path(os.path.realpath(given))
    for link in (given, resolved):  # a venv's bin/python: the venv, and the installation its link points to
        where = install_root(link)
        if where is not None:
            binds.append(where)
    interpreter = _script_interpreter(resolved, path)
    if interpreter is not None and interpreter != resolved:
        _inner, more = resolve_program(str(interpreter), path=path, cwd=cwd)
        binds += more
    run = str(given) if root is not None else program
    return run, list(dict.fromkeys(b.resolve() for b in binds))
