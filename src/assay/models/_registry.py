"""Providers registered by name, and :func:`get_model` to build one from a ``provider/model`` string.

Outside packages add providers through the ``assay.models`` entry-point group (name -> a callable
taking the model part of the string and keyword options, returning a :class:`ChatModel`).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from assay.errors import ConfigError, install_command
from assay.models._types import ChatModel

__all__ = ["PROVIDERS", "ProviderInfo", "get_model", "preflight", "register_provider", "split_model_string"]


@dataclass(frozen=True)
class ProviderInfo:
    """A provider: where its factory lives and how a user configures it."""

    name: str
    target: str  # "module:attr"
    example: str
    env: tuple[str, ...] = ()
    extra: str | None = None
    summary: str = ""

    def configured(self) -> tuple[bool, str]:
        """Whether this provider looks usable here, and why not."""
        if self.name == "openai" and not any(
            os.environ.get(e) for e in ("OPENAI_API_KEY", "ASSAY_OPENAI_API_KEY")
        ):
            return False, "set OPENAI_API_KEY"
        if self.name == "anthropic" and not os.environ.get("ANTHROPIC_API_KEY"):
            return False, "set ANTHROPIC_API_KEY"
        if self.name == "local" and importlib.util.find_spec("xllamacpp") is None:
            return False, install_command("local")
        return True, "ready"


PROVIDERS: dict[str, ProviderInfo] = {
    "openai-compat": ProviderInfo(
        "openai-compat",
        "assay.models.openai_compat:OpenAICompatModel",
        "openai-compat/qwen3@http://127.0.0.1:8080/v1",
        env=("ASSAY_OPENAI_BASE_URL", "ASSAY_OPENAI_API_KEY", "OPENAI_API_KEY"),
        summary="any OpenAI-compatible server (llama.cpp, vLLM, Ollama, Lemonade)",
    ),
    "openai": ProviderInfo(
        "openai",
        "assay.models.openai_compat:OpenAIModel",
        "openai/gpt-4o-mini",
        env=("OPENAI_API_KEY", "ASSAY_OPENAI_BASE_URL"),
        summary="OpenAI's chat completions API",
    ),
    "anthropic": ProviderInfo(
        "anthropic",
        "assay.models._anthropic:AnthropicModel",
        "anthropic/claude-sonnet-4-5",
        env=("ANTHROPIC_API_KEY", "ASSAY_ANTHROPIC_BASE_URL"),
        summary="Anthropic's Messages API",
    ),
    "local": ProviderInfo(
        "local",
        "assay.models._local:LocalModel",
        "local/smollm2",
        env=("ASSAY_LOCAL_MODEL_PATH",),
        extra="local",
        summary="llama.cpp in a server child process; SmolLM2-135M-Instruct by default, --model-path for any GGUF",
    ),
    "scripted": ProviderInfo(
        "scripted",
        "assay.models.scripted:ScriptedModel",
        "scripted/path/to/script.yaml",
        summary="replies from a YAML/JSON script (tests and pr suites)",
    ),
}

_EXTRA: dict[str, Callable[..., ChatModel]] = {}


def register_provider(name: str, factory: Callable[..., ChatModel]) -> None:
    """Register ``factory(model, **options) -> ChatModel`` under ``name``."""
    _EXTRA[name] = factory


def split_model_string(spec: str) -> tuple[str, str]:
    """``"provider/model"`` -> ``(provider, model)``; the model part may itself contain slashes."""
    provider, sep, model = spec.partition("/")
    if not sep or not provider or not model:
        raise ConfigError(
            f"model {spec!r} is not 'provider/model' (providers: {', '.join(sorted(PROVIDERS))}; "
            "e.g. local/smollm2, openai-compat/NAME@http://127.0.0.1:8080/v1)"
        )
    return provider, model


def _entry_point(name: str) -> Callable[..., ChatModel] | None:
    for ep in entry_points(group="assay.models"):
        if ep.name == name:
            factory: Callable[..., ChatModel] = ep.load()
            return factory
    return None


def get_model(spec: str, **options: Any) -> ChatModel:
    """Build the chat model named by ``spec`` (``provider/model``), e.g. ``local/smollm2``.

    Keyword options go to the provider (``base_url``, ``api_key``, ``model_path``, ``max_retries``,
    ``max_concurrency``, ``defaults={"temperature": 0}``, ...).
    """
    provider, model = split_model_string(spec)
    if provider in _EXTRA:
        return _EXTRA[provider](model, **options)
    info = PROVIDERS.get(provider)
    if info is None:
        factory = _entry_point(provider)
        if factory is None:
            raise ConfigError(
                f"unknown model provider {provider!r} in {spec!r}; known: {', '.join(sorted(PROVIDERS))}"
            )
        return factory(model, **options)
    module_name, _, attr = info.target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    instance: ChatModel = cls(model, **options)
    return instance


async def preflight(model: ChatModel | str, **options: Any) -> ChatModel:
    """Build ``model`` if given as a string, run its cheap preflight check (if it has one) and return it.

    Raises :class:`~assay.errors.ConfigError` (a missing key or URL, naming the env var or flag) or
    :class:`~assay.errors.InfraError` (unreachable, credentials rejected), each one line, before a run
    spends anything.
    """
    instance = get_model(model, **options) if isinstance(model, str) else model
    check = getattr(instance, "preflight", None)
    if check is not None:
        await check()
    return instance
