"""Claude Code through the model gateway (assay.agents.gateway): Anthropic front, any assay model behind.

On a scripted upstream the record is exact and the tokens Claude Code reports equal what the gateway counted;
an upstream outage is the run's infra_error, never the agent's; on the embedded SmolLM2 the plumbing holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agents import Limits, RunSpec, get_harness
from assay.agents.claude_code import find_claude
from assay.agents.gateway import Gateway
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel

pytestmark = pytest.mark.slow

try:
    find_claude()
except ConfigError as exc:  # .ci/run installs it; a checkout without it fails loudly rather than skipping
    pytest.fail(str(exc), pytrace=False)


async def test_scripted_upstream_exact_record_and_tokens(tmp_path: Path) -> None:
    script = {
        "replies": [
            {
                "tool_calls": [
                    {"name": "Write", "arguments": {"file_path": str(tmp_path / "f.txt"), "content": "hi\n"}}
                ]
            },
            {
                "tool_calls": [
                    {"name": "Bash", "arguments": {"command": "wc -l < f.txt", "description": "count"}}
                ]
            },
            {"text": "f.txt has one line."},
        ]
    }
    harness = get_harness("claude-code")
    try:
        with Gateway(ScriptedModel(script)) as gw:
            run = gw.new_run_id()
            spec = RunSpec(
                workdir=tmp_path, route=gw.route("claude-sonnet-4-5", run=run), limits=Limits(wall_clock_s=60)
            )
            r = await harness.run("write f.txt and count its lines", spec)
            counted = gw.usage(run=run)
    finally:
        await harness.close()
    assert r.error is None and r.infra_error is None and r.answer == "f.txt has one line."
    got = [(c.name, c.kind, c.status, c.edited_paths, c.exit_code) for c in r.tool_record]
    assert got == [("Write", "write", "ok", ["f.txt"], None), ("Bash", "shell", "ok", [], 0)]
    assert r.tool_record[1].result_summary == "1"
    assert counted.ok_calls == 3 and r.usage.calls == 3
    assert r.usage.input_tokens == counted.usage.input_tokens > 0
    assert r.usage.output_tokens == counted.usage.output_tokens > 0
    assert r.model_ran == counted.model_ran is not None


async def test_upstream_outage_is_infra_error(tmp_path: Path) -> None:
    harness = get_harness("claude-code")
    try:
        with Gateway(ScriptedModel({"replies": [{"error": "infra"}], "loop": True})) as gw:
            r = await harness.run("hi", RunSpec(workdir=tmp_path, route=gw.route("claude-sonnet-4-5")))
            # model calls only (Claude Code also probes the root URL once)
            calls = [c for c in gw.calls() if c.endpoint.endswith("/messages")]
    finally:
        await harness.close()
    assert r.infra_error is not None and "503" in r.infra_error
    assert r.error is None and r.tool_record == []
    assert [c.status for c in calls] == [
        "infra_error"
    ]  # no retries: the gateway already said the upstream is down


@pytest.mark.local_model
async def test_embedded_smollm2_plumbing(tmp_path: Path) -> None:
    # the tiny model's context is small: Claude Code with a short system prompt and one tool
    harness = get_harness(
        "claude-code",
        extra_args=["--tools", "Read", "--system-prompt", "You are a helpful coding agent. Be brief."],
    )
    try:
        with Gateway(
            "local/smollm2", model_options={"ctx_size": 4096, "defaults": {"temperature": 0, "seed": 7}}
        ) as gw:
            spec = RunSpec(
                workdir=tmp_path,
                route=gw.route("claude-sonnet-4-5"),
                limits=Limits(wall_clock_s=240, max_steps=2),
            )
            r = await harness.run("Say hello.", spec)
            counted = gw.usage()
    finally:
        await harness.close()
    assert r.infra_error is None and r.error is None, r
    assert r.answer.strip() and r.session_id
    assert r.usage.input_tokens == counted.usage.input_tokens > 0 and r.usage.output_tokens > 0
    assert r.model_ran is not None and r.model_ran.startswith("local/")


async def test_model_without_route_gets_its_own_gateway(tmp_path: Path) -> None:
    script = tmp_path.parent / "script.yaml"
    script.write_text("replies:\n  - text: from my own gateway\n")
    harness = get_harness("claude-code", model=f"scripted/{script}")
    try:
        r = await harness.run("hi", RunSpec(workdir=tmp_path))
        gateway = harness._own_gateway._gateway
        assert gateway is not None and gateway.running
    finally:
        await harness.close()
    assert r.error is None and r.answer == "from my own gateway"
    assert r.usage.input_tokens > 0 and r.model_ran is not None
    assert not gateway.running  # close() stopped it
