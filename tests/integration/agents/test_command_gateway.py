"""mini-swe-agent through the ``command`` harness and the model gateway: exact on a scripted upstream (its
token count equals the gateway's). The embedded model's run is in test_command_gateway_local.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agents import Limits, RunSpec, get_harness
from assay.agents._gateway import Gateway
from assay.errors import ConfigError
from assay.models._scripted import ScriptedModel

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
