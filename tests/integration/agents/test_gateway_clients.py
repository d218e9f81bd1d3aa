"""The clients that read a gateway's counts and set its limits (once or twice a run of an agent program) verify with
the process's one certificate store: none loads its own (about 20 ms of CPU each)."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from assay.agents.gateway import Gateway, fetch_calls, fetch_usage, limit_steps
from assay.models import get_model, ssl_context
from assay.models.scripted import ScriptedModel


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every certificate store loaded from here on (the shared one is loaded first)."""
    ssl_context()
    seen: list[Any] = []
    real = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        seen.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    return seen


async def test_reading_and_limiting_a_run_loads_no_certificate_store(loads: list[Any]) -> None:
    async with Gateway(ScriptedModel({"default": {"text": "ok"}})) as gateway:
        route = gateway.route(run="r1")
        assert await limit_steps(route, 3) == 0
        assert (await fetch_usage(route)).calls == 0
        assert await fetch_calls(route) == []
    assert loads == []


async def test_a_model_client_loads_none_of_its_own(loads: list[Any]) -> None:
    model = get_model("openai-compat/m@https://api.example.invalid/v1", api_key="sk-test")
    client = model.http.client()  # type: ignore[attr-defined]
    await model.http.aclose()  # type: ignore[attr-defined]
    assert client.is_closed and loads == []


async def test_the_count_is_honest_a_client_of_its_own_loads_one(loads: list[Any]) -> None:
    import httpx

    async with httpx.AsyncClient():
        pass
    assert len(loads) == 1
