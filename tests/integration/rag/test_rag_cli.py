"""`assay rag index|search|ask|list|remove` through click."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._rag import rag_group
from assay.errors import ConfigError
from assay.evals.retrieval._rag import default_eval_dir

DOCS = default_eval_dir() / "pr" / "docs"
HARD = default_eval_dir() / "pr" / "hard"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"ASSAY_HOME": str(tmp_path / "home"), "ASSAY_RAG_INDEX": str(tmp_path / "idx")}


def test_index_search_list_remove(env: dict[str, str], tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(rag_group, ["index", str(DOCS), "--embedder", "hash"], env=env)
    assert res.exit_code == 0, res.output
    assert "8 documents" in res.output and "cache miss" in res.output
    again = runner.invoke(rag_group, ["index", str(DOCS)], env=env)  # embedder remembered
    assert again.exit_code == 0 and again.output.count("unchanged") == 8

    res = runner.invoke(rag_group, ["search", "fume hood sash height", "-k", "2", "--json"], env=env)
    rows = [json.loads(line) for line in res.output.splitlines()]
    assert res.exit_code == 0 and len(rows) == 2
    assert rows[0]["doc"].endswith("lab-safety-sop7.pdf") and rows[0]["page"] == 1
    assert "45 cm" in rows[0]["text"]

    listed = runner.invoke(rag_group, ["list"], env=env).output.splitlines()
    assert len(listed) == 8
    sop = next(line.split("\t")[0] for line in listed if "sop7" in line)
    assert runner.invoke(rag_group, ["remove", sop], env=env).exit_code == 0
    res = runner.invoke(rag_group, ["search", "fume hood sash height", "--json"], env=env)
    assert all("sop7" not in json.loads(line)["doc"] for line in res.output.splitlines())


def test_bad_documents_are_reported_and_others_indexed(env: dict[str, str]) -> None:
    res = CliRunner().invoke(
        rag_group,
        ["index", str(HARD), str(DOCS / "greenfield-coop-bylaws.txt"), "--embedder", "hash"],
        env=env,
    )
    assert res.exit_code == 1
    assert "scanned-notice.pdf: PDF has no text layer" in res.stderr and "OCR" in res.stderr
    assert "truncated-report.pdf" in res.stderr
    assert "1 documents" in res.stdout


def test_search_without_an_index_and_with_another_embedder(env: dict[str, str]) -> None:
    runner = CliRunner()
    res = runner.invoke(rag_group, ["search", "anything"], env=env)
    assert isinstance(res.exception, ConfigError) and "assay rag index" in str(res.exception)
    runner.invoke(
        rag_group, ["index", str(DOCS / "greenfield-coop-bylaws.txt"), "--embedder", "hash"], env=env
    )
    res = runner.invoke(rag_group, ["search", "quorum", "--embedder", "hash:64"], env=env)
    assert isinstance(res.exception, ConfigError) and "--embedder" in str(res.exception)


def test_ask_with_a_scripted_model(env: dict[str, str], tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"match": "quorum", "text": "30% of the members [1]"}]}))
    runner = CliRunner()
    runner.invoke(
        rag_group, ["index", str(DOCS / "greenfield-coop-bylaws.txt"), "--embedder", "hash"], env=env
    )
    res = runner.invoke(rag_group, ["ask", "What is the quorum?", "--model", f"scripted/{script}"], env=env)
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("30% of the members") and "*[1]" in res.stderr
