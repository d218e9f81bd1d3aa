from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    for var in ("ASSAY_RESULTS_DIR", "ASSAY_SUITE", "ASSAY_ITERATIONS", "ASSAY_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
