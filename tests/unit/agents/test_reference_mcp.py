"""The reference agent's MCP tools: a real stdio MCP server (``mcp_calc_server.py``, written with the SDK) is
started on the first turn, its tool offered as ``calc__add`` and called, the exact record kept; the server
process ends on close(); servers come from the option or the profile's mcp.json; bad specs are ConfigErrors."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.agents import AgentResult, RunSpec
from assay.agents.reference import DEFAULT_PROFILE, ReferenceHarness
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel

SERVER = Path(__file__).with_name("mcp_calc_server.py")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _record(result: AgentResult) -> list[dict[str, Any]]:
    rows = []
    for call in result.tool_record:
        row = call.model_dump()
        assert row.pop("started_s") <= row.pop("ended_s")
        rows.append(row)
    return rows


def _row(arguments: dict[str, Any], summary: str, status: str) -> dict[str, Any]:
    return {
        "name": "calc__add",
        "kind": "mcp",
        "arguments": arguments,
        "result_summary": summary,
        "status": status,
        "edited_paths": [],
        "command": None,
        "exit_code": None,
        "test_counts": None,
    }


def _servers(pid_file: Path) -> dict[str, Any]:
    return {
        "calc": {"command": sys.executable, "args": [str(SERVER)], "env": {"CALC_PID_FILE": str(pid_file)}}
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_an_mcp_servers_tool_is_offered_called_and_recorded(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    pid_file = tmp_path / "calc.pid"
    model = ScriptedModel(
        [_call("calc__add", a=2, b=40), _call("calc__add", a=2), {"text": "2 + 40 = 42"}, {"text": "again"}]
    )
    harness = ReferenceHarness(model=model, tools=["read_file"], mcp_servers=_servers(pid_file))
    result = await harness.run("What is 2 + 40?", RunSpec(workdir=work))
    pid = int(pid_file.read_text())
    assert result.answer == "2 + 40 = 42" and _alive(pid)
    [row_ok, row_bad] = _record(result)
    assert row_ok == _row({"a": 2, "b": 40}, "42", "ok")
    # the server checks the arguments: its refusal is the call's error, and the run goes on
    summary = row_bad.pop("result_summary")
    expected = _row({"a": 2}, "", "error")
    del expected["result_summary"]
    assert row_bad == expected
    assert summary.startswith(
        "Error executing tool add: 1 validation error for addArguments b Field required"
    )
    tools = {t.name: t for t in model.calls[0]["tools"]}
    assert set(tools) == {"read_file", "calc__add"}
    assert tools["calc__add"].description == "Add two integers and return the sum."
    assert tools["calc__add"].parameters["required"] == ["a", "b"]
    # a later turn reuses the running server (listed once)
    again = await harness.run("and again?", RunSpec(workdir=work, session_id=result.session_id))
    assert again.answer == "again" and int(pid_file.read_text()) == pid
    await harness.close()
    assert not _alive(pid)
    assert "calc__add" not in {t.name for t in harness.tools}


async def test_the_profiles_mcp_json_names_the_servers(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    shutil.copytree(DEFAULT_PROFILE, profile)
    pid_file = tmp_path / "calc.pid"
    (profile / "mcp.json").write_text(json.dumps(_servers(pid_file)))
    work = tmp_path / "work"
    work.mkdir()
    model = ScriptedModel([_call("calc__add", a=-1, b=1), {"text": "0"}])
    harness = ReferenceHarness(model=model, profile=profile)
    result = await harness.run("-1 + 1?", RunSpec(workdir=work))
    await harness.close()
    assert _record(result) == [_row({"a": -1, "b": 1}, "0", "ok")]
    assert not _alive(int(pid_file.read_text()))


async def test_a_server_that_cannot_start_is_a_config_error_naming_it(tmp_path: Path) -> None:
    broken = {"calc": {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no such server')"]}}
    harness = ReferenceHarness(model=ScriptedModel([{"text": "x"}]), mcp_servers=broken)
    with pytest.raises(ConfigError, match=r"MCP server 'calc'.*did not start") as err:
        await harness.run("hi", RunSpec(workdir=tmp_path))
    assert "no such server" in str(err.value)
    await harness.close()


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ({"a__b": {"command": "x"}}, "MCP server 'a__b': the name"),
        ({"calc": {"args": []}}, "MCP server 'calc': command should be"),
        ({"calc": {"command": "x", "args": "y"}}, "args should be a list"),
        ({"calc": {"command": "x", "env": {"A": 1}}}, "env should be an object of strings"),
        ({"calc": {"command": "x", "cwd": "/"}}, "unknown key"),
        (["calc"], "should be an object"),
    ],
)
def test_bad_server_specs_are_config_errors(servers: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ReferenceHarness(mcp_servers=servers)


def test_a_broken_mcp_json_names_the_file(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    shutil.copytree(DEFAULT_PROFILE, profile)
    (profile / "mcp.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"mcp\.json is not JSON") as err:
        ReferenceHarness(profile=profile)
    assert err.value.path == str(profile / "mcp.json")
