"""A second real CLI agent through the ``command`` harness: Codex CLI (npm ``@openai/codex``, installed by
.ci/run into .cache/npm) on a loopback Responses-API server, its ``exec --json`` events parsed into the record."""

from __future__ import annotations

from pathlib import Path

import pytest
from cliagents_loopback import ResponsesLoopback

from assay.agents import Limits, Route, RunSpec, get_harness
from assay.agents._env import GATEWAY_PLACEHOLDER_KEY
from assay.errors import ConfigError

pytestmark = pytest.mark.slow


async def test_codex_runs_commands_and_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret-value")
    harness = get_harness("command", agent="codex")
    try:
        harness.program({"PATH": ""})
    except ConfigError as exc:  # .ci/run installs it; without it this fails loudly rather than skipping
        pytest.fail(str(exc), pytrace=False)
    script = [
        {
            "tool": "exec_command",
            "input": {"cmd": "printf 'x = 1\\n' > a.py && env | grep -c sk-host-secret"},
        },
        {"text": "a.py is written."},
    ]
    with ResponsesLoopback(script) as srv:
        route = Route(model="loopback-model", openai_base_url=f"http://127.0.0.1:{srv.port}/v1")
        r = await harness.run(
            "write a.py", RunSpec(workdir=tmp_path, route=route, limits=Limits(wall_clock_s=90))
        )
    assert r.error is None and r.exit_code == 0 and r.record_level == "full", r
    assert r.answer == "a.py is written." and r.session_id
    (call,) = r.tool_record
    # grep counted no line with the host's key: exit 1, output "0"
    assert call.kind == "shell" and call.exit_code == 1 and call.result_summary == "0"
    assert (tmp_path / "a.py").read_text() == "x = 1\n"
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0
    assert srv.steps_served == 2 and srv.requests[0]["body"]["model"] == "loopback-model"
    assert {h.get("authorization") for h in srv.headers} == {f"Bearer {GATEWAY_PLACEHOLDER_KEY}"}
