from __future__ import annotations

import pytest
from _cibench import CiBench

from assay.evals._registry import _registered


@pytest.fixture(autouse=True)
def _cibench(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_registered, "cibench", CiBench)
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("ASSAY_CI_TIER", raising=False)
