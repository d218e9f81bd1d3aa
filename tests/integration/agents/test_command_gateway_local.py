"""mini-swe-agent through the ``command`` harness and the gateway on the embedded SmolLM2: the plumbing holds
(tokens counted equal the gateway's, the model read back), whatever the tiny model answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agents import Limits, RunSpec, get_harness
from assay.agents._command import PRESETS
from assay.agents.gateway import Gateway
from assay.errors import ConfigError

pytestmark = [pytest.mark.slow, pytest.mark.local_model]


def _harness(**options: str):
    harness = get_harness("command", agent="mini-swe-agent", **options)
    try:
        harness.program({"PATH": ""})
    except ConfigError as exc:  # .ci/run installs it; without it this fails loudly rather than skipping
        pytest.fail(str(exc), pytrace=False)
    return harness


async def test_embedded_smollm2_plumbing(tmp_path: Path) -> None:
    with Gateway(
        "local/smollm2", model_options={"ctx_size": 4096, "defaults": {"temperature": 0, "seed": 7}}
    ) as gw:
        spec = RunSpec(
            workdir=tmp_path, route=gw.route("gpt-4o"), limits=Limits(wall_clock_s=240, max_steps=2)
        )
        # a short prompt and short replies: the tiny model on a shared CPU is slow on mini's long default prompt
        template = PRESETS["mini-swe-agent"].template + (
            " -c model.model_kwargs.max_tokens=16 -c 'agent.system_template=You run bash commands.'"
            " -c 'agent.instance_template={{{{task}}}}'"
        )
        r = await _harness(template=template).run("List the files.", spec)
        counted = gw.usage()
    # the tiny model may not make a well-formed call: the run ends on the step cap or a submit, never an outage
    assert r.infra_error is None and r.cut_off in (None, "steps"), r
    assert counted.ok_calls >= 1 and r.usage.calls == counted.ok_calls
    assert r.usage.input_tokens == counted.usage.input_tokens > 0
    assert r.usage.output_tokens == counted.usage.output_tokens > 0
    assert r.steps == counted.ok_calls
    assert r.model_ran is not None and r.model_ran.startswith("local/")
