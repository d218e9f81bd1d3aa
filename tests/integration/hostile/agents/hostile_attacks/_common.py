"""What the attacks share: reading what they may, reporting what they got, starting marked processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

#: the folder holding this package (a new process imports it from there)
ROOT = Path(__file__).resolve().parents[1]
#: bytes of a file shown in a GOT line
SHOWN = 600
#: files looked at in one walk (a walk of a big tree ends there)
WALK_CAP = 2000


def got(what: str, data: bytes | str) -> str:
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    return f"GOT {what} {text[:SHOWN]!r}"


def denied(what: str, exc: BaseException | str) -> str:
    return f"DENIED {what}: {exc}"


def read_any(path: str | Path, max_files: int = 50) -> list[str]:
    """A file's head, or each file's head under a folder (two levels down): GOT or DENIED lines."""
    p = Path(path)
    lines: list[str] = []
    try:
        if p.is_dir():
            for n, f in enumerate(sorted(x for x in p.rglob("*") if x.is_file())):
                if n >= max_files:
                    break
                lines += read_any(f)
            return lines or [denied(str(p), "nothing readable")]
        return [got(str(p), p.read_bytes()[:SHOWN])]
    except OSError as exc:
        return [denied(str(p), exc)]


def fake_keys(text: str, prefix: str) -> list[str]:
    """Values of the fake key's shape (``prefix`` and what follows): the only keys an attack reports."""
    return sorted(set(re.findall(re.escape(prefix) + r"[A-Za-z0-9_\-]+", text)))


def report_keys(where: str, text: str, prefix: str) -> list[str]:
    # hexed: the eval's scrubber would blank the key itself, hiding what the agent got
    return [f"GOT key from {where} hex:{k.encode().hex()}" for k in fake_keys(text, prefix)]


def spawn(params: dict, role: str, *, wait: bool = True, timeout: float | None = None) -> str:
    """Run ``role`` of this attack in a new process whose command line carries the marker (the suite finds
    what is left by it); with ``wait``, its output."""
    line = "HOSTILE " + json.dumps({**params, "role": role})
    argv = [sys.executable, "-m", "hostile_attacks", line, params["marker"]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not wait:
        subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        return f"started {role}"
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        return f"{role} ran past {timeout} s: {exc.stdout or ''}"
    return (done.stdout + done.stderr).strip()


def detach() -> None:
    """The calling process leaves its parent's pipes and session (what a daemon does)."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
