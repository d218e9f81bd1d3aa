"""The ``python`` harness on small agent modules (tests/integration/agents/cliagents_pyagent.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cliagents_loopback import OpenAILoopback

from assay.agents import Limits, Route, RunSpec, get_harness
from assay.agents.fence import fence_available
from assay.errors import ConfigError


async def test_async_agent_uses_its_route_and_reports_calls(tmp_path: Path) -> None:
    with OpenAILoopback([{"text": "hello from the model"}]) as srv:
        route = Route(model="m-1", openai_base_url=f"http://127.0.0.1:{srv.port}/v1")
        r = await get_harness("python:cliagents_pyagent:edit_agent").run(
            "say hi", RunSpec(workdir=tmp_path, route=route)
        )
    assert r.error is None and r.harness == "python" and r.record_level == "full"
    assert (tmp_path / "out.txt").read_text() == "hello from the model"
    assert r.answer == "wrote 20 chars" and r.edited_paths == ["out.txt"] and r.steps == 1
    assert r.tool_record[0].kind == "write" and r.model_ran == "m-1"
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0 and r.usage.cost_usd is None
    assert srv.requests[0]["body"]["messages"] == [{"role": "user", "content": "say hi"}]


async def test_sync_agent_gets_history_and_session(tmp_path: Path) -> None:
    spec = RunSpec(
        workdir=tmp_path,
        history=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        session_id="s9",
    )
    r = await get_harness("python", target="cliagents_pyagent:echo_history").run("c", spec)
    assert r.answer == "2 earlier messages; session=s9; you said: c"
    assert r.record_level == "answer_only" and r.tool_record == [] and r.session_id == "s9"


async def test_kwargs_agent_gets_everything_and_its_record_is_kept(tmp_path: Path) -> None:
    r = await get_harness("python:cliagents_pyagent:record_agent").run("x", RunSpec(workdir=tmp_path))
    assert (
        r.answer
        == "['env', 'history', 'limits', 'model', 'prompt', 'route', 'session_id', 'spec', 'workdir']"
    )
    assert r.harness == "python" and r.calls(kind="shell")[0].command == "ls"


async def test_callable_passed_directly(tmp_path: Path) -> None:
    r = await get_harness("python", fn=lambda prompt: prompt.upper()).run("ok", RunSpec(workdir=tmp_path))
    assert r.answer == "OK"


@pytest.mark.parametrize("target", ["slow_sync", "slow_async"])
async def test_wall_clock_cuts_off(tmp_path: Path, target: str) -> None:
    started = time.monotonic()
    r = await get_harness(f"python:cliagents_pyagent:{target}").run(
        "x", RunSpec(workdir=tmp_path, limits=Limits(wall_clock_s=0.3))
    )
    assert r.cut_off == "wall_clock" and r.answer == "" and time.monotonic() - started < 2


async def test_agent_failures_are_errors_not_raises(tmp_path: Path) -> None:
    spec = RunSpec(workdir=tmp_path)
    broken = await get_harness("python:cliagents_pyagent:broken").run("x", spec)
    assert broken.error is not None and broken.error.startswith("RuntimeError: the agent fell over (at ")
    wrong = await get_harness("python:cliagents_pyagent:wrong_type").run("x", spec)
    assert wrong.error == "the agent returned int; expected str, dict or AgentResult"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("cliagents_pyagent", "expected 'pkg.module:function'"),
        ("no_such_module_xyz:fn", "cannot import 'no_such_module_xyz'"),
        ("cliagents_pyagent:nope", "has no attribute 'nope'"),
        ("cliagents_pyagent:NOT_CALLABLE", "is not callable"),
    ],
)
def test_bad_targets_are_config_errors(target: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        get_harness("python", target=target)


async def test_missing_parameter_and_in_process_fence_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"asks for \['temperature'\]"):
        await get_harness("python:cliagents_pyagent:needs_more").run("x", RunSpec(workdir=tmp_path))
    with pytest.raises(ConfigError, match=r"--fence: the python \(an in-process callable\)"):
        await get_harness("python", fn=lambda prompt: prompt).run("x", RunSpec(workdir=tmp_path, fence=True))


@pytest.mark.skipif(fence_available() is not None, reason="bubblewrap cannot run here")
async def test_a_fenced_python_agent_runs_in_its_child_and_sees_no_project(tmp_path: Path) -> None:
    result = await get_harness("python:cliagents_pyagent:echo_history").run(
        "hi", RunSpec(workdir=tmp_path, fence=True)
    )
    assert result.error is None, result.error
    assert result.answer.endswith("you said: hi")
    assert result.containment is not None and result.containment.fenced
    assert result.containment.killed == [] and result.containment.stopped_by is None


@pytest.mark.skipif(fence_available() is not None, reason="bubblewrap cannot run here")
async def test_a_fenced_python_agent_of_several_files_imports_its_siblings_and_not_its_folders_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "agents"
    (home / "parts").mkdir(parents=True)  # a namespace package beside the module
    (home / "parts" / "word.py").write_text("WORD = 'heron'\n")
    (home / "fence_two_files.py").write_text(
        "import os\nfrom parts.word import WORD\n\n"
        "def run(prompt, workdir):\n    return f'{WORD} {os.path.exists(os.path.join(os.path.dirname(__file__), \"key.txt\"))}'\n"
    )
    (home / "key.txt").write_text("an answer key beside the agent\n")
    monkeypatch.syspath_prepend(str(home))
    work = tmp_path / "work"
    work.mkdir()
    result = await get_harness("python:fence_two_files:run").run("x", RunSpec(workdir=work, fence=True))
    assert result.error is None, result.error
    assert result.answer == "heron True"  # its own folder, read-only
    monkeypatch.chdir(home)  # the folder the eval runs from: its modules only, not its data
    result = await get_harness("python:fence_two_files:run").run("x", RunSpec(workdir=work, fence=True))
    assert result.error is None, result.error
    assert result.answer == "heron False"
