"""get_model parsing, provider registration and the package's public surface."""

from __future__ import annotations

from pathlib import Path

import pytest

import assay.models
from assay.errors import ConfigError
from assay.models import PROVIDERS, ChatModel, Message, ModelOutput, get_model, register_provider


@pytest.mark.parametrize("spec", ["smollm2", "/model", "local/", ""])
def test_malformed_strings(spec: str) -> None:
    with pytest.raises(ConfigError, match="provider/model"):
        get_model(spec)


def test_unknown_provider_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"anthropic.*local.*openai-compat.*scripted"):
        get_model("nope/model")


def test_openai_compat_string_with_url() -> None:
    m = get_model("openai-compat/qwen3@http://127.0.0.1:8080/v1")
    assert m.name == "openai-compat/qwen3"
    assert m.describe()["base_url"] == "http://127.0.0.1:8080/v1"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="http://"):
        get_model("openai-compat/qwen3@127.0.0.1:8080")


async def test_register_provider() -> None:
    class Echo:
        name = "echo/x"

        async def generate(self, messages, tools=None, stream=False, **options):  # type: ignore[no-untyped-def]
            return ModelOutput(text=messages[-1].content)

        def stream(self, messages, tools=None, **options):  # type: ignore[no-untyped-def]
            raise NotImplementedError

    register_provider("echo", lambda model, **kw: Echo())
    m = get_model("echo/x")
    assert isinstance(m, ChatModel)
    assert (await m.generate([Message("user", "ping")])).text == "ping"


def test_every_provider_is_described() -> None:
    for info in PROVIDERS.values():
        assert info.example.startswith(info.name + "/")
        assert info.summary
        ok, why = info.configured()
        assert isinstance(ok, bool) and why


def test_exported_members() -> None:
    exported = set(assay.models.__all__)
    public = {n for n in dir(assay.models) if not n.startswith("_")} - {"annotations"}
    assert exported == public - {n for n in public if getattr(assay.models, n).__class__.__name__ == "module"}


async def test_preflight_helper(tmp_path: Path) -> None:
    from assay.models import preflight
    from assay.models._server import free_port

    script = tmp_path / "s.yaml"
    script.write_text("- text: hi\n")
    model = await preflight(f"scripted/{script}")
    assert model.name.startswith("scripted/")
    from assay.errors import InfraError

    with pytest.raises(InfraError, match="ASSAY_OPENAI_BASE_URL"):
        await preflight(f"openai-compat/m@http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        await preflight("anthropic/claude-sonnet-4-5")


def test_openai_defaults_to_openai_and_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    m = get_model("openai/gpt-4o-mini")
    assert m.name == "openai/gpt-4o-mini"
    assert m.describe()["base_url"] == "https://api.openai.com/v1"  # type: ignore[attr-defined]


async def test_entry_point_providers_are_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import assay.models._registry as registry
    from assay.models.scripted import ScriptedModel

    script = tmp_path / "s.yaml"
    script.write_text("- text: from a plugin\n")

    class FakeEntryPoint:
        name = "plugin"

        def load(self):  # type: ignore[no-untyped-def]
            return lambda model, **kw: ScriptedModel(tmp_path / model, **kw)

    def fake_entry_points(group: str):  # type: ignore[no-untyped-def]
        assert group == "assay.models"
        return [FakeEntryPoint()]

    monkeypatch.setattr(registry, "entry_points", fake_entry_points)
    model = get_model("plugin/s.yaml")
    assert (await model.generate([Message("user", "x")])).text == "from a plugin"
