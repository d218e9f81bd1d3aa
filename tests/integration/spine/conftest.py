from __future__ import annotations

import os
from pathlib import Path

import pytest

TOY_DIR = Path(__file__).resolve().parents[2] / "spine"


@pytest.fixture
def toy_env(tmp_path: Path) -> dict[str, str]:
    """Environment for running `assay eval toy` in a subprocess with a private ASSAY_HOME."""
    env = dict(os.environ)
    env["ASSAY_HOME"] = str(tmp_path / "home")
    env["ASSAY_PLUGINS"] = "toy:ToyBenchmark"
    env["PYTHONPATH"] = os.pathsep.join([str(TOY_DIR), env.get("PYTHONPATH", "")])
    env.pop("ASSAY_NO_LOCK", None)
    return env
