"""The toybox toolchain (a venv with only pytest, shared by the tasks of a run): an attempt that installed
something into it says so, and the next run's setup makes it anew instead of handing the install on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tasks_fixtures import agent_script, grades, write_script

from assay.agents.fence import fence_available
from assay.cli._tasks import tasks_run_command
from assay.evals._workspace import cached_toolchain, toolchain_venv
from assay.runs._journal import latest_attempts, read_journal

INSTALL = (
    "python -c \"import os, site; os.mkdir(os.path.join(site.getsitepackages()[0], 'evil-1.0.dist-info'))\""
)


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    for name in ("ASSAY_MODEL", "ASSAY_JUDGE_MODEL", "ASSAY_SUITE", "ASSAY_TASKS"):
        monkeypatch.delenv(name, raising=False)


def test_an_install_into_the_toolchain_is_said_and_not_handed_to_the_next_run(
    tmp_path: Path, tasks_dir: Path
) -> None:
    work = tmp_path / "work"  # a toolchain of this test's own: others' runs never see the install
    replies = [{"tool_calls": [{"name": "run_shell", "arguments": {"command": INSTALL}}]}, *agent_script()]
    args = [
        "--model", write_script(tmp_path / "agent.yaml", replies),
        "--judge-model", write_script(tmp_path / "judge.yaml", [grades(fix_add=4, explain=4)]),
        "--tasks-file", str(tasks_dir / "tasks.json"), "--tasks", "fix-add", "--no-judge",
        "--results-dir", str(tmp_path / "results"), "--work-root", str(work),
        "--no-fence",  # under the fence (the default where it works) the toolchain is read-only: no install
    ]  # fmt: skip
    result = CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    run_dir = next((tmp_path / "results").iterdir())
    fix = latest_attempts(read_journal(run_dir / "results.jsonl"))[("fix-add", 0)]
    assert fix.status == "PASS" and fix.details["toolchain_installed"] == ["site-packages/evil-1.0.dist-info"]
    venv = toolchain_venv(work)
    assert venv.installed() == ["site-packages/evil-1.0.dist-info"]
    # the next setup makes it anew: pytest still there, the install gone
    assert cached_toolchain(work) == venv.bin and venv.installed() == []
    site = next((venv.root / "lib").glob("python*/site-packages"))
    assert (site / "pytest").is_dir() and not (site / "evil-1.0.dist-info").exists()


@pytest.mark.skipif(fence_available() is not None, reason="bubblewrap cannot run here")
def test_under_the_default_fence_an_install_into_the_toolchain_is_refused(
    tmp_path: Path, tasks_dir: Path
) -> None:
    work = tmp_path / "work"
    replies = [{"tool_calls": [{"name": "run_shell", "arguments": {"command": INSTALL}}]}, *agent_script()]
    args = [
        "--model", write_script(tmp_path / "agent.yaml", replies),
        "--tasks-file", str(tasks_dir / "tasks.json"), "--tasks", "fix-add", "--no-judge",
        "--results-dir", str(tmp_path / "results"), "--work-root", str(work),
    ]  # fmt: skip
    result = CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    run_dir = next((tmp_path / "results").iterdir())
    fix = latest_attempts(read_journal(run_dir / "results.jsonl"))[("fix-add", 0)]
    assert fix.status == "PASS" and "toolchain_installed" not in fix.details
    assert "Read-only file system" in fix.details["commands"][0] or fix.details["commands"][0].endswith(
        "exit 1"
    )
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["config"]["extra"]["fence"] is True and meta["config"]["extra"]["fence_note"] is None
    assert toolchain_venv(work).installed() == []
