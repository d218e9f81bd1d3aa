"""The reference agent on the embedded SmolLM2 end to end: plumbing only (a parsed tool record, counted tokens,
the model read back, a tool result sent back for the next call), never the tiny model's skill. The model is
made to call list_files (tool_choice) at temperature 0, and the step cap ends each run after its second call
(whose arguments are the model's own: it may ask for a folder outside the workdir, which is refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agents import AgentResult, Limits, Route, RunSpec
from assay.agents.gateway import Gateway
from assay.agents.reference import ReferenceHarness
from assay.models import get_model
from assay.models._local import LocalModel

pytestmark = pytest.mark.local_model

OPTIONS = {"tool_choice": "list_files", "max_tokens": 48, "temperature": 0, "seed": 7}
TWO_STEPS = Limits(max_steps=2, wall_clock_s=180)  # a busy CPU makes two calls slow: steps end it


def check_two_steps(result: AgentResult) -> None:
    """Two model calls with the first call's tool result in between, the record kept at the step cap."""
    assert result.error is None and result.infra_error is None, result.error or result.infra_error
    assert result.cut_off == "steps" and result.steps == 2
    assert [c.name for c in result.tool_record] == ["list_files"] * 2
    for (
        call
    ) in result.tool_record:  # the arguments are the tiny model's own: parsed and run (a path it made up
        # fails as the tool's error), or refused
        assert call.kind == "list" and isinstance(call.arguments, dict)
        assert call.status in ("ok", "error") or call.status.startswith("refused: "), call.status
    roles = [e.role for e in result.transcript]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    first_call = result.transcript[2].tool_calls[0]
    tool_result = result.transcript[3]
    assert tool_result.tool_call_id == first_call["id"]
    assert " ".join(tool_result.content.split())[:200] == result.tool_record[0].result_summary[:200]
    assert result.usage.calls == 2 and result.usage.output_tokens > 0
    # the second call's prompt holds the first one's, its tool call and the tool result
    assert result.usage.input_tokens > 2 * 50


async def test_reference_agent_on_the_embedded_model(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    local = get_model("local/smollm2", ctx_size=2048)
    assert isinstance(local, LocalModel)
    harness = ReferenceHarness(model=local, tools=["list_files", "read_file"], generate_options=OPTIONS)
    result = await harness.run("What files are here?", RunSpec(workdir=tmp_path, limits=TWO_STEPS))
    check_two_steps(result)
    # what the tool returned for the model's own arguments (greedy, this prompt: a folder it made up)
    path = result.tool_record[0].arguments.get("path") or "."
    if path in (".", "./"):
        listed = "app.py"
    elif path.startswith("/") and not path.startswith(str(tmp_path)):
        listed = f"refused: absolute path '{path}' is outside the workdir"
    else:
        listed = f"error: no such file or directory: {path}"
    assert result.tool_record[0].result_summary == listed
    assert result.usage.cost_usd == 0.0 and result.usage.cost_source == "harness_counts"
    assert result.model_ran == "SmolLM2-135M-Instruct.Q4_1"

    # the same through a route straight to the model's OpenAI-compatible server
    server = local.server
    assert server is not None
    routed = ReferenceHarness(tools=["list_files"], generate_options=OPTIONS, model_args={"max_retries": 0})
    spec = RunSpec(
        workdir=tmp_path, limits=TWO_STEPS, route=Route(model=server.model, openai_base_url=server.base_url)
    )
    result = await routed.run("List the files.", spec)
    await routed.close()
    check_two_steps(result)
    assert result.model_ran == server.model

    # and through the gateway in front of it: the gateway counts the same two calls the agent does
    async with Gateway(local) as gateway:
        run = Gateway.new_run_id()
        via = ReferenceHarness(tools=["list_files"], generate_options=OPTIONS)
        result = await via.run(
            "List the files.", RunSpec(workdir=tmp_path, limits=TWO_STEPS, route=gateway.route(run=run))
        )
        await via.close()
        counted = gateway.usage(run=run)
    check_two_steps(result)
    assert counted.calls == 2
    assert (counted.usage.input_tokens, counted.usage.output_tokens) == (
        result.usage.input_tokens,
        result.usage.output_tokens,
    )
