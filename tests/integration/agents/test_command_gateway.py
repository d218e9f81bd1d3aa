"""mini-swe-agent through the ``command`` harness and the model gateway: exact on a scripted upstream (its
token count equals the gateway's). The embedded model's run is in test_command_gateway_local.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assay.agents import Limits, RunSpec, get_harness
from assay.agents.gateway import Gateway
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel

pytestmark = pytest.mark.slow


def _harness():
    harness = get_harness("command", agent="mini-swe-agent")
    try:
        harness.program({"PATH": ""})
    except ConfigError as exc:  # .ci/run installs it; without it this fails loudly rather than skipping
        pytest.fail(str(exc), pytrace=False)
    return harness


async def test_scripted_upstream_through_the_gateway(tmp_path: Path) -> None:
    script = {
        "replies": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo 42 > answer.txt"}}]},
            {
                "tool_calls": [
                    {"name": "bash", "arguments": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}
                ]
            },
        ]
    }
    with Gateway(ScriptedModel(script)) as gw:
        run = gw.new_run_id()
        spec = RunSpec(workdir=tmp_path, route=gw.route("gpt-4o", run=run), limits=Limits(wall_clock_s=90))
        r = await _harness().run("write the answer", spec)
        counted = gw.usage(run=run)
    assert r.error is None and r.infra_error is None, r
    assert [(c.name, c.command, c.exit_code) for c in r.tool_record] == [
        ("bash", "echo 42 > answer.txt", 0),
        ("submit", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", None),
    ]
    assert (tmp_path / "answer.txt").read_text() == "42\n"
    assert counted.ok_calls == 2 == r.usage.calls
    assert r.usage.input_tokens == counted.usage.input_tokens > 0
    assert r.usage.output_tokens == counted.usage.output_tokens > 0
    assert r.model_ran == counted.model_ran is not None


AGENT = """
import json, os, sys, urllib.error, urllib.request
calls, prompt = int(sys.argv[1]), sys.argv[2]
i = 0
while calls == 0 or i < calls:
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": prompt}]}).encode()
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                 headers={"content-type": "application/json"})
    try:
        reply = json.load(urllib.request.urlopen(req))
    except urllib.error.HTTPError as exc:
        print("failed", exc.code)
        sys.exit(1)
    print(reply["choices"][0]["message"]["content"], flush=True)
    i += 1
"""


@pytest.fixture
def agent(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A plain CLI agent with no log of its own: it asks the model N times (0: until stopped), prints the replies."""
    path = tmp_path_factory.mktemp("agent") / "agent.py"
    path.write_text(AGENT)
    return f"{sys.executable} {path}"


async def test_answer_only_agent_counted_by_the_gateway(tmp_path: Path, agent: str) -> None:
    with Gateway(ScriptedModel({"replies": [{"text": "one"}, {"text": "two"}]})) as gw:
        run = gw.new_run_id()
        spec = RunSpec(workdir=tmp_path, route=gw.route("gpt-4o", run=run))
        r = await get_harness("command", template=f"{agent} 2 {{prompt}}").run("count", spec)
        counted = gw.usage(run=run)
    assert r.error is None and r.record_level == "answer_only" and r.answer == "one\ntwo"
    assert counted.ok_calls == 2 and r.usage == counted.usage and r.usage.total_tokens > 0
    assert r.model_ran == counted.model_ran is not None


async def test_outage_behind_a_failed_agent_is_infra_error(tmp_path: Path, agent: str) -> None:
    with Gateway(ScriptedModel({"replies": [{"error": "infra"}]})) as gw:
        r = await get_harness("command", template=f"{agent} 1 {{prompt}}").run(
            "x", RunSpec(workdir=tmp_path, route=gw.route("gpt-4o", run=gw.new_run_id()))
        )
    assert r.exit_code == 1 and r.answer == "failed 503"
    assert r.infra_error is not None and r.error is None


async def test_token_cap_stops_the_agent(tmp_path: Path, agent: str) -> None:
    with Gateway(
        ScriptedModel(
            {"replies": [{"text": "again", "usage": {"input_tokens": 40, "output_tokens": 10}}], "loop": True}
        )
    ) as gw:
        run = gw.new_run_id()
        spec = RunSpec(
            workdir=tmp_path,
            route=gw.route("gpt-4o", run=run),
            limits=Limits(max_tokens=200, wall_clock_s=30),
        )
        r = await get_harness("command", template=f"{agent} 0 {{prompt}}").run("loop", spec)
    assert r.cut_off == "tokens" and r.error is None and r.elapsed_s < 10
    assert r.usage.total_tokens > 200 and r.answer.startswith("again\nagain\nagain\nagain")


async def test_token_cap_needs_a_gateway(tmp_path: Path, agent: str) -> None:
    with pytest.raises(
        ConfigError, match="--max-tokens: the command harness caps tokens through the model gateway"
    ):
        await get_harness("command", template=f"{agent} 1 x").run(
            "x", RunSpec(workdir=tmp_path, limits=Limits(max_tokens=5))
        )


async def test_model_without_route_gets_its_own_gateway(tmp_path: Path, agent: str) -> None:
    script = tmp_path.parent / "script.yaml"
    script.write_text("replies:\n  - text: counted\n")
    harness = get_harness("command", template=f"{agent} 1 {{prompt}}", model=f"scripted/{script}")
    try:
        r = await harness.run("x", RunSpec(workdir=tmp_path))
    finally:
        await harness.close()
    assert r.error is None and r.answer == "counted"
    assert r.usage.calls == 1 and r.usage.total_tokens > 0 and r.model_ran is not None
