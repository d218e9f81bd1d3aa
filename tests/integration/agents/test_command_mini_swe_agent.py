"""A real CLI agent through the ``command`` harness: mini-swe-agent (PyPI, installed by .ci/run into
.cache/venvs/mini-swe-agent) on a loopback OpenAI-compatible server, its trajectory parsed into the record."""

from __future__ import annotations

from pathlib import Path

import pytest
from cliagents_loopback import OpenAILoopback

from assay.agents import Limits, Route, RunSpec, get_harness
from assay.agents._env import GATEWAY_PLACEHOLDER_KEY
from assay.errors import ConfigError

pytestmark = pytest.mark.slow


def _harness():
    harness = get_harness("command", agent="mini-swe-agent")
    try:
        harness.program({"PATH": ""})
    except ConfigError as exc:  # .ci/run installs it; without it this fails loudly rather than skipping
        pytest.fail(str(exc), pytrace=False)
    return harness


async def test_mini_swe_agent_edits_and_submits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret-value")
    script = [
        {"tool": "bash", "input": {"command": "printf 'x = 1\\n' > a.py"}, "say": "Writing a.py."},
        {"tool": "bash", "input": {"command": "python3 a.py && env | grep -c sk-host-secret; exit 3"}},
        {
            "tool": "bash",
            "input": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"},
            "say": "a.py is written.",
        },
    ]
    with OpenAILoopback(script) as srv:
        route = Route(model="loopback-model", openai_base_url=f"http://127.0.0.1:{srv.port}/v1")
        r = await _harness().run(
            "write a.py", RunSpec(workdir=tmp_path, route=route, limits=Limits(wall_clock_s=90))
        )
    assert r.error is None and r.cut_off is None and r.exit_code == 0, r
    assert r.record_level == "full" and r.answer == "a.py is written."
    assert [(c.name, c.kind, c.exit_code) for c in r.tool_record] == [
        ("bash", "shell", 0),
        ("bash", "shell", 3),
        ("submit", "other", None),
    ]
    assert r.tool_record[1].result_summary == "0"  # the host's key was not in the agent's environment
    assert (tmp_path / "a.py").read_text() == "x = 1\n"
    assert r.usage.calls == 3 and r.usage.input_tokens > 0 and r.usage.output_tokens > 0
    assert r.model_ran == "loopback-model" and r.steps == 3
    assert srv.requests[0]["body"]["model"] == "loopback-model"
    assert {h.get("authorization") for h in srv.headers} == {f"Bearer {GATEWAY_PLACEHOLDER_KEY}"}
