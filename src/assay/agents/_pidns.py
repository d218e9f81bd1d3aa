"""Unfenced agents in their own PID namespace: the eval's processes (and the provider keys in their
``/proc/<pid>/environ``) are out of sight.

    argv = own_pids(["claude", "-p", prompt])   # bwrap --dev-bind / / --unshare-pid --proc /proc -- claude ...

The fence (bubblewrap, ``--fence``) hides everything; an unfenced agent still sees the whole filesystem and
network, but only its own process tree: a fresh ``/proc`` mounted in a new PID namespace shows no process of
the eval, so no ``environ`` holding a key can be opened. bubblewrap is tried first (``--dev-bind / /``: the same
filesystem, nothing else unshared but PIDs), then util-linux's ``unshare``; where neither can create the
namespace (no privilege, no user namespaces, not Linux), the command runs as before and :func:`pid_isolation`
says why, once per process, for the run's record.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["own_pids", "pid_isolation"]

_PROBE_TIMEOUT_S = 20


def _candidates() -> list[list[str]]:
    found: list[list[str]] = []
    bwrap = shutil.which("bwrap")
    if bwrap:
        # the agent keeps the whole filesystem and the network; PIDs only, ended with the eval
        found.append([bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--die-with-parent"])
    unshare = shutil.which("unshare")
    if unshare:
        # the agent is not PID 1 of the namespace (init ignores SIGTERM): unshare forks it, and ends it with itself
        found.append([unshare, "--pid", "--fork", "--mount-proc", "--kill-child"])
    return found


def _sees_only_itself(prefix: list[str]) -> str | None:
    """None when ``prefix`` runs a command that sees no process outside its namespace, else why not."""
    # inside, the shell and its `ls` are the only processes besides the namespace's init (bwrap's or unshare's)
    probe = [*prefix, "--", "sh", "-c", "ls /proc | grep -c '^[0-9]'"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{prefix[0]} did not run: {exc}"
    if done.returncode != 0:
        return f"{prefix[0]}: " + ((done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1])
    count = done.stdout.strip()
    if not count.isdigit() or int(count) > 4:
        return f"{prefix[0]} ran, but the command saw {count or 'no'} processes"
    return None


@lru_cache(maxsize=1)
def _probe() -> tuple[tuple[str, ...], str | None]:
    if not sys.platform.startswith("linux"):
        return (), f"no PID namespace on {sys.platform}: an unfenced agent can see the eval's processes"
    reasons: list[str] = []
    for prefix in _candidates():
        why = _sees_only_itself(prefix)
        if why is None:
            return tuple(prefix), None
        reasons.append(why)
    if not reasons:
        reasons.append("neither bwrap nor unshare is installed")
    return (), "no PID namespace for unfenced agents (" + "; ".join(reasons) + ")"


def pid_isolation() -> str | None:
    """None when unfenced agents run in their own PID namespace here, else the one line saying why not."""
    return _probe()[1]


def own_pids(argv: Sequence[str]) -> list[str]:
    """``argv`` run in its own PID namespace where this machine allows one (else ``argv`` as is: see
    :func:`pid_isolation`)."""
    prefix, _ = _probe()
    return [*prefix, "--", *argv] if prefix else list(argv)
