"""Fixtures of the model tests; the fake server itself lives in models_fakes.py (importable by name)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from models_fakes import FakeServer


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "OPENAI_API_KEY",
        "ASSAY_OPENAI_API_KEY",
        "ASSAY_OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ASSAY_ANTHROPIC_BASE_URL",
        "ASSAY_RATE_CARD",
        "ASSAY_LOCAL_MODEL_PATH",
    ):
        monkeypatch.delenv(var, raising=False)
