"""A third real CLI agent through the ``command`` harness: aider (PyPI ``aider-chat``, installed by .ci/run into
.cache/venvs/aider) on a loopback OpenAI-compatible server, then through the gateway (which counts its tokens)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cliagents_loopback import OpenAILoopback

from assay.agents import Limits, Route, RunSpec, get_harness
from assay.agents.gateway import Gateway
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel

pytestmark = pytest.mark.slow
WHOLE = 'I will create hello.py.\n\nhello.py\n```python\nprint("hi")\n```\n'  # aider's "whole" edit format


def _harness():
    harness = get_harness("command", agent="aider")
    try:
        harness.program({"PATH": ""})
    except ConfigError as exc:  # .ci/run installs it; without it this fails loudly rather than skipping
        pytest.fail(str(exc), pytrace=False)
    return harness


async def test_aider_edits_on_loopback(tmp_path: Path) -> None:
    with OpenAILoopback([{"text": WHOLE}]) as srv:
        route = Route(model="loopback-model", openai_base_url=f"http://127.0.0.1:{srv.port}/v1")
        r = await _harness().run("create hello.py printing hi", RunSpec(workdir=tmp_path, route=route))
    assert r.error is None and r.exit_code == 0, r
    assert r.edited_paths == ["hello.py"] and (tmp_path / "hello.py").read_text() == 'print("hi")\n'
    assert r.answer.startswith("I will create hello.py.") and r.steps == 1
    assert srv.steps_served == 1 and srv.requests[0]["body"]["model"] == "loopback-model"


async def test_aider_through_the_gateway_counts_tokens(tmp_path: Path) -> None:
    with Gateway(ScriptedModel({"replies": [{"text": WHOLE}]})) as gw:
        run = gw.new_run_id()
        # a model name aider does not know: it keeps its "whole" edit format (it picks "diff" for gpt-4o)
        spec = RunSpec(
            workdir=tmp_path, route=gw.route("loopback-model", run=run), limits=Limits(wall_clock_s=90)
        )
        r = await _harness().run("create hello.py printing hi", spec)
        counted = gw.usage(run=run)
    assert r.error is None and r.edited_paths == ["hello.py"], r
    assert counted.ok_calls == 1 and r.usage == counted.usage and r.usage.input_tokens > 0
    assert r.model_ran == counted.model_ran is not None
