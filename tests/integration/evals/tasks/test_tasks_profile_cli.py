"""`assay eval tasks run --profile DIR` (ASSAY_PROFILE): the reference agent runs with that profile (its system
prompt reaches the model), the profile is recorded in the subject config, and another harness is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from tasks_fixtures import agent_script, run_tasks, write_script

from assay.agents.reference._profile import DEFAULT_PROFILE
from assay.cli._tasks import tasks_run_command
from assay.models.scripted import ScriptedModel

MARKER = "PROFILE-MARKER-7f3a: keep every change minimal."


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    for name in ("ASSAY_MODEL", "ASSAY_JUDGE_MODEL", "ASSAY_SUITE", "ASSAY_TASKS", "ASSAY_PROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedModel]:
    """Every scripted model built during the test (the gateway's agent model among them), calls recorded."""
    built: list[ScriptedModel] = []
    init = ScriptedModel.__init__

    def record(self: ScriptedModel, *args: object, **kw: object) -> None:
        init(self, *args, **kw)  # type: ignore[arg-type]
        built.append(self)

    monkeypatch.setattr(ScriptedModel, "__init__", record)
    return built


def _system_prompts(models: list[ScriptedModel]) -> list[str]:
    return [m.content for model in models for c in model.calls for m in c["messages"] if m.role == "system"]


def test_the_profile_reaches_the_model_and_is_recorded(
    tmp_path: Path, tasks_dir: Path, models: list[ScriptedModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "profile"
    shutil.copytree(DEFAULT_PROFILE, profile)
    (profile / "system.md").write_text((DEFAULT_PROFILE / "system.md").read_text() + "\n" + MARKER + "\n")
    monkeypatch.setenv("ASSAY_PROFILE", str(profile))  # the variable, as every tasks setting reads one
    agent = write_script(tmp_path / "agent.yaml", agent_script()[:3])
    code, out, run_dir = run_tasks(tmp_path, tasks_dir, agent, agent, "--tasks", "fix-add", "--no-judge")
    assert code == 0, out
    assert run_dir is not None
    prompts = _system_prompts(models)
    assert prompts and all(MARKER in p for p in prompts)
    card = json.loads((run_dir / "scorecard.json").read_text())
    assert card["config"]["extra"]["profile"] == str(profile)
    assert card["summary"]["counts"]["PASS"] == 1  # the copied profile still offers edit_file and run_tests


def test_without_a_profile_the_built_in_one_runs(
    tmp_path: Path, tasks_dir: Path, models: list[ScriptedModel]
) -> None:
    agent = write_script(tmp_path / "agent.yaml", agent_script()[:3])
    code, out, run_dir = run_tasks(tmp_path, tasks_dir, agent, agent, "--tasks", "fix-add", "--no-judge")
    assert code == 0, out
    assert run_dir is not None
    prompts = _system_prompts(models)
    assert prompts and not any(MARKER in p for p in prompts)
    assert json.loads((run_dir / "scorecard.json").read_text())["config"]["extra"]["profile"] is None


def test_a_profile_with_another_harness_or_not_a_folder_is_refused(tmp_path: Path, tasks_dir: Path) -> None:
    base = ["--model", "scripted/x.yaml", "--tasks-file", str(tasks_dir / "tasks.json")]
    other = CliRunner().invoke(
        tasks_run_command, [*base, "--harness", "claude-code", "--profile", str(DEFAULT_PROFILE)]
    )
    assert "--profile is the reference agent's folder, not --harness claude-code's" in str(other.exception)
    missing = CliRunner().invoke(tasks_run_command, [*base, "--profile", str(tmp_path / "nope")])
    assert "--profile: not a folder" in str(missing.exception)
