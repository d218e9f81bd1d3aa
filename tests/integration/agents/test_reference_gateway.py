"""The reference agent through the real model gateway (loopback, scripted upstream): the exact record, the
tokens the gateway counted, the upstream read back, and an upstream outage recorded as infra_error."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agents import Limits, RunSpec
from assay.agents.gateway import Gateway
from assay.agents.reference import ReferenceHarness
from assay.models.scripted import ScriptedModel


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "greet.py").write_text("def greet():\n    return 'helo'\n")
    return work


async def test_through_the_gateway(project: Path) -> None:
    upstream = ScriptedModel(
        [
            {
                "tool_calls": [{"name": "read_file", "arguments": {"path": "greet.py"}}],
                "usage": {"input_tokens": 300, "output_tokens": 20},
            },
            {
                "tool_calls": [
                    {"name": "edit_file", "arguments": {"path": "greet.py", "old": "helo", "new": "hello"}}
                ],
                "usage": {"input_tokens": 340, "output_tokens": 30},
            },
            {"text": "Fixed the typo.", "usage": {"input_tokens": 380, "output_tokens": 5}},
        ]
    )
    async with Gateway(upstream) as gateway:
        run = Gateway.new_run_id()
        route = gateway.route(run=run)
        harness = ReferenceHarness()
        result = await harness.run("fix the typo", RunSpec(workdir=project, route=route))
        await harness.close()
        counted = gateway.usage(run=run)
    assert result.infra_error is None and result.error is None, result.infra_error or result.error
    assert result.answer == "Fixed the typo."
    assert [(c.name, c.status, c.edited_paths) for c in result.tool_record] == [
        ("read_file", "ok", []),
        ("edit_file", "ok", ["greet.py"]),
    ]
    assert (project / "greet.py").read_text() == "def greet():\n    return 'hello'\n"
    # the agent's own count is the gateway's: three calls, every token
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.calls) == (1020, 55, 3)
    assert (counted.usage.input_tokens, counted.usage.output_tokens, counted.calls) == (1020, 55, 3)
    assert result.model_ran == counted.model_ran == "scripted/inline"  # read back from the gateway's answers
    # the upstream saw the tool results the agent appended
    assert [m.role for m in upstream.calls[2]["messages"]][-2:] == ["assistant", "tool"]


async def test_an_upstream_outage_behind_the_gateway_is_infra_error(project: Path) -> None:
    upstream = ScriptedModel(
        [
            {"tool_calls": [{"name": "list_files", "arguments": {}}]},
            {"error": "infra", "message": "upstream unreachable"},
        ]
    )
    async with Gateway(upstream) as gateway:
        harness = ReferenceHarness()
        spec = RunSpec(workdir=project, route=gateway.route(), limits=Limits(wall_clock_s=30))
        result = await harness.run("go", spec)
        await harness.close()
    assert result.infra_error is not None and "upstream unreachable" in result.infra_error
    assert result.error is None and result.cut_off is None
    assert [c.name for c in result.tool_record] == ["list_files"]  # what it did before the outage is kept
    assert result.elapsed_s < 10


def _conversation() -> list[dict[str, object]]:
    return [
        {
            "tool_calls": [{"name": "read_file", "arguments": {"path": "greet.py"}}],
            "usage": {"input_tokens": 300, "output_tokens": 20},
        },
        {"text": "It says helo.", "usage": {"input_tokens": 340, "output_tokens": 5}},
    ]


async def test_in_the_gateways_process_the_agent_calls_its_app_without_a_socket(tmp_path: Path) -> None:
    """Same process: the calls reach the gateway's app on the agent's own loop (none through its socket), with
    the very record, usage and log a call over the socket gets (the socket path forced by withdrawing it)."""
    from assay.models import serve_in_process

    results, sockets, logs = [], [], []
    for in_process in (True, False):
        work = tmp_path / f"work-{in_process}"
        work.mkdir()
        (work / "greet.py").write_text("def greet():\n    return 'helo'\n")
        async with Gateway(ScriptedModel(_conversation())) as gateway:
            if not in_process:
                serve_in_process(gateway.url, None)
            run = Gateway.new_run_id()
            harness = ReferenceHarness()
            result = await harness.run(
                "what does greet say?", RunSpec(workdir=work, route=gateway.route(run=run))
            )
            await harness.close()
            server = gateway._server
            logs.append(
                [
                    (c.run == run, c.endpoint.replace(run, "RUN"), c.status, c.input_tokens)
                    for c in gateway.calls()
                ]
            )
        # read once the gateway has stopped: uvicorn counts a request when its response is complete, on the
        # gateway's thread, which can come after the client has read the answer
        sockets.append(server.server_state.total_requests)
        assert result.error is None and result.infra_error is None, result.error or result.infra_error
        results.append(
            (
                result.answer,
                [(c.name, c.status, c.result_summary) for c in result.tool_record],
                result.usage.model_dump(),
                [e.model_dump() for e in result.transcript],
                result.model_ran,
            )
        )
    assert sockets == [0, 2]
    assert results[0] == results[1]
    call = (True, "/run/RUN/v1/chat/completions", "ok")
    assert logs[0] == logs[1] == [(*call, 300), (*call, 340)]


async def test_a_cancelled_call_in_the_gateways_process_stays_cancelled_while_it_stops() -> None:
    """A call made in process is its caller's: cancelled as the gateway stops (a run being stopped), it ends
    cancelled, not answered 503 as the server answers a socket's caller it stops under."""
    import asyncio

    from assay.models import Message, get_model

    async with Gateway(ScriptedModel({"default": {"text": "late", "delay_s": 30}})) as gateway:
        model = get_model(f"openai-compat/m@{gateway.route(run='r1').openai_base_url}", max_retries=0)
        call = asyncio.ensure_future(model.generate([Message("user", "hi")]))
        upstream = gateway.upstream
        assert isinstance(upstream, ScriptedModel)
        for _ in range(500):  # until the call waits on the upstream
            if upstream.calls or call.done():
                break
            await asyncio.sleep(0.01)
        assert upstream.calls and not call.done()
        # what a stopped run does: its gateway stops, then its calls are cancelled
        await asyncio.to_thread(gateway.stop)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await model.http.aclose()  # type: ignore[attr-defined]
    (record,) = gateway.calls()
    assert (record.status, record.http_status) == ("error", 499)
