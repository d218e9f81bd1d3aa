"""Every exit code a command can return is in the README's table, and each one is produced here for real."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

from spine_cli import assay, start_assay

from assay.errors import ExitCode

README = Path(__file__).resolve().parents[3] / "README.md"


def _readme_codes() -> dict[int, str]:
    rows = re.findall(r"^\| `(\d+)` \| (.+?) \|$", README.read_text(encoding="utf-8"), flags=re.M)
    return {int(code): text for code, text in rows}


def test_the_readme_table_lists_exactly_the_exit_codes_commands_return():
    assert sorted(_readme_codes()) == sorted(int(c) for c in ExitCode)


def test_each_exit_code(toy_env, tmp_path):
    seen: dict[int, str] = {}

    def check(code: ExitCode, args: list[str]) -> subprocess.CompletedProcess[str]:
        res = assay(args, toy_env, tmp_path)
        assert res.returncode == code, f"{args}: {res.returncode}\n{res.stderr}"
        assert "Traceback" not in res.stderr
        seen[int(code)] = " ".join(args)
        return res

    check(ExitCode.OK, ["eval", "toy", "--cases", "6", "-n", "2", "--out", "good"])
    check(ExitCode.USAGE, ["eval", "toy", "--no-such-flag"])
    check(
        ExitCode.REGRESSION,
        ["eval", "toy", "--cases", "6", "-n", "2", "--fail-every", "1", "--compare", "good"],
    )
    res = check(
        ExitCode.NOT_COMPARABLE, ["eval", "toy", "--cases", "6", "--outage-after", "2", "--out", "down"]
    )
    assert "resume with: assay eval toy --resume down" in res.stderr

    # busy: a second eval while the first holds the lock
    first = start_assay(
        ["eval", "toy", "--cases", "40", "--delay", "0.2", "-j", "1", "--out", "long"], toy_env, tmp_path
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "long" / "meta.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        res = check(ExitCode.BUSY, ["eval", "toy", "--cases", "2", "--out", "second"])
        assert res.stderr.startswith(f"error: another eval is running (pid {first.pid}")
        assert not (tmp_path / "second").exists()
        # interrupted: Ctrl-C to the holder
        first.send_signal(signal.SIGINT)
        first.wait(timeout=30)
        assert first.returncode == ExitCode.INTERRUPTED
        seen[int(ExitCode.INTERRUPTED)] = "eval toy (SIGINT)"
    finally:
        if first.poll() is None:
            first.kill()
    assert sorted(seen) == sorted(_readme_codes()), "a code in the README table is not produced by this test"
