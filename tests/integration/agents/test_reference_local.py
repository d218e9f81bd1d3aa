"""The reference agent on the embedded SmolLM2 end to end: plumbing only (a parsed tool record, counted tokens,
the model read back), never the tiny model's skill. The model is made to call list_files (tool_choice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agents import Limits, Route, RunSpec
from assay.agents._reference import ReferenceHarness
from assay.models import get_model
from assay.models._local import LocalModel

pytestmark = pytest.mark.local_model

OPTIONS = {"tool_choice": "list_files", "max_tokens": 48, "temperature": 0, "seed": 7}


async def test_reference_agent_on_the_embedded_model(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    local = get_model("local/smollm2", ctx_size=2048)
    assert isinstance(local, LocalModel)
    harness = ReferenceHarness(model=local, tools=["list_files", "read_file"], generate_options=OPTIONS)
    # one step: the model's call is parsed and run, then the step cap ends the run (record kept)
    result = await harness.run("What files are here?", RunSpec(workdir=tmp_path, limits=Limits(max_steps=1)))
    assert result.error is None and result.infra_error is None, result.error or result.infra_error
    assert result.cut_off == "steps" and result.steps == 1
    [call] = result.tool_record
    assert call.name == "list_files" and call.kind == "list" and isinstance(call.arguments, dict)
    assert call.status == "ok" and call.result_summary == "app.py"
    assert result.usage.calls == 1 and result.usage.input_tokens > 50 and result.usage.output_tokens > 0
    assert result.usage.cost_usd == 0.0 and result.usage.cost_source == "harness_counts"
    assert result.model_ran == "SmolLM2-135M-Instruct.Q4_1"
    # the same through a route to the model's OpenAI-compatible server (what the gateway is to the agent)
    server = local.server
    assert server is not None
    routed = ReferenceHarness(tools=["list_files"], generate_options=OPTIONS, model_args={"max_retries": 0})
    spec = RunSpec(
        workdir=tmp_path,
        limits=Limits(max_steps=1),
        route=Route(model=server.model, openai_base_url=server.base_url),
    )
    result = await routed.run("List the files.", spec)
    await routed.close()
    assert result.infra_error is None and [c.name for c in result.tool_record] == ["list_files"]
    assert result.usage.input_tokens > 50 and result.model_ran == server.model
