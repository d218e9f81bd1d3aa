"""The quick start's terminal summary says why a case failed, in the benchmark's own terms (it printed only
``FAIL 1``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_eval_prints_why_each_case_failed(tmp_path: Path) -> None:
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / "home"), "COLUMNS": "200", "ASSAY_PROGRESS": "off"}
    cmd = [sys.executable, "-m", "assay", "eval", "retrieval", "--component", "rag"]
    proc = subprocess.run(
        [*cmd, "--results-dir", str(tmp_path / "r")], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "why cases failed:" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("q/design-run-dir:"))
    assert "Where does a run write its results by default?" in line
    assert "first hit at rank 6" in line and "a pass needs the top 5" in line
