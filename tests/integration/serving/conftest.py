from __future__ import annotations

import pytest

from assay.evals.serving import StubConfig, StubServer


@pytest.fixture(autouse=True)
def _assay_env(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))


@pytest.fixture
def stub_factory():
    started: list[StubServer] = []

    def make(**kwargs) -> StubServer:
        stub = StubServer(StubConfig(**kwargs)).start()
        started.append(stub)
        return stub

    yield make
    for stub in started:
        stub.stop()
