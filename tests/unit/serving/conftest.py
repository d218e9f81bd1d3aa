from __future__ import annotations

import pytest

from assay.evals.serving import StubConfig, StubServer


@pytest.fixture
def stub_factory():
    """Start stubs with a given config; all are stopped after the test."""
    started: list[StubServer] = []

    def make(process: bool = False, **kwargs) -> StubServer:
        """``process=True`` serves from a child process: no GIL shared with the client under test."""
        stub = StubServer(StubConfig(**kwargs))
        stub.start_process() if process else stub.start()
        started.append(stub)
        return stub

    yield make
    for stub in started:
        stub.stop()
