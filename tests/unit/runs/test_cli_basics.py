from __future__ import annotations

import subprocess
import sys

from assay import __version__


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True, timeout=60)


def test_version_and_help():
    assert _run("--version").stdout.strip() == f"assay, version {__version__}"
    out = _run("--help")
    assert out.returncode == 0
    for name in ("eval", "runs", "compare", "gate", "models", "rag", "code-index", "memory"):
        assert f"  {name} " in out.stdout


def test_unknown_command_and_bad_path_exit_1_with_one_line():
    res = _run("nope")
    assert res.returncode == 1 and "No such command" in res.stderr
    res = _run("runs", "show", "/nonexistent/run")
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "/nonexistent/run" in res.stderr
