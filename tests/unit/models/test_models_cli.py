"""`assay models list` and `assay models try` through the real command line (scripted and fake-server models)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from models_fakes import FakeServer, Reply, load_fixture, sse_blocks

from assay.cli import cli
from assay.errors import ConfigError, InfraError


def _run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=True)


def test_models_list_names_every_provider_and_env_var() -> None:
    result = _run("models", "list", env={"ANTHROPIC_API_KEY": "sk-ant-x", "OPENAI_API_KEY": ""})
    assert result.exit_code == 0, result.output
    out = result.output
    for name in ("openai-compat", "openai", "anthropic", "local", "scripted"):
        assert f"\n{name}  " in "\n" + out
    assert "ANTHROPIC_API_KEY (set)" in out
    assert "not ready: set OPENAI_API_KEY" in out
    assert "ASSAY_OPENAI_BASE_URL" in out and "ASSAY_RATE_CARD" in out


def test_models_try_scripted(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- text: Hello from the script.\n  usage: {input_tokens: 4, output_tokens: 5}\n")
    result = _run("models", "try", f"scripted/{script}", "hi")
    assert result.exit_code == 0, result.output
    assert "Hello from the script." in result.output
    assert "tokens in=4 out=5" in result.output and "cost $0.000000 (harness_counts)" in result.output


def test_models_try_openai_compat_prints_figures(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body={"data": [{"id": "gpt-4o-mini"}]}), Reply(sse=sse_blocks("openai_stream.sse")))
    result = _run(
        "models", "try", f"openai-compat/gpt-4o-mini@{fake_server.url}/v1", "hi", "--max-tokens", "9"
    )
    assert result.exit_code == 0, result.output
    assert "Hello there!" in result.output
    assert "tokens in=12 out=3" in result.output and "TTFT" in result.output and "tokens/s" in result.output
    assert fake_server.requests[1].body["max_tokens"] == 9


def test_models_try_no_stream(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body={"data": []}), Reply(body=load_fixture("openai_chat.json")))
    result = _run("models", "try", f"openai-compat/gpt-4o-mini@{fake_server.url}/v1", "hi", "--no-stream")
    assert result.exit_code == 0, result.output
    assert "Paris" in result.output and "stream" not in (fake_server.requests[1].body or {})


def test_models_try_errors_are_typed() -> None:
    result = _run("models", "try", "anthropic/claude-sonnet-4-5", "hi", env={"ANTHROPIC_API_KEY": ""})
    assert isinstance(result.exception, ConfigError) and "ANTHROPIC_API_KEY" in str(result.exception)
    from assay.models._server import free_port

    result = _run("models", "try", f"openai-compat/m@http://127.0.0.1:{free_port()}/v1", "hi")
    assert isinstance(result.exception, InfraError) and result.exception.exit_code == 3


@pytest.mark.parametrize("args", [["models", "try", "nonsense", "hi"], ["models", "try", "nope/x", "hi"]])
def test_models_try_bad_model_string(args: list[str]) -> None:
    result = _run(*args)
    assert isinstance(result.exception, ConfigError)
