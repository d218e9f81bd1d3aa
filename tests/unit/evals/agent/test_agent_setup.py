"""A scenario's setup: workdir files, a document index from files or inline text, a memory store seeded in a
private folder (never the workdir); bad paths and missing documents named by scenario file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agents.reference.memory import open_memory
from assay.embed import HashEmbedder
from assay.errors import ConfigError
from assay.evals.agent._scenario import Scenario
from assay.evals.agent._setup import needs_memory, prepare
from assay.rag import query_documents


def _scenario(setup: dict, **over: object) -> Scenario:
    data: dict = {
        "id": "s1",
        "category": "memory",
        "persona": "p",
        "setup": setup,
        "turns": [{"objective": "o", "success_criteria": "c"}],
        "path": "eval/scenarios/memory/s1.yaml",
    }
    data.update(over)
    return Scenario.model_validate(data)


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "_documents"
    docs.mkdir()
    (docs / "policy.md").write_text("# Leave\n\nNew hires get 25 days of paid leave each year.\n")
    return docs


def test_files_documents_and_memory_are_prepared(tmp_path: Path) -> None:
    scenario = _scenario(
        {
            "files": {"notes/todo.txt": "call Bob", "README.md": "# hi"},
            "documents": [{"name": "policy.md"}, {"name": "faq.txt", "text": "Parking costs 5 euros a day."}],
            "memory": ["My manager is called Priya Raman."],
        }
    )
    work = tmp_path / "work"
    emb = HashEmbedder()
    prepared = prepare(scenario, work, _docs(tmp_path), emb, memory_root=tmp_path / "private")
    try:
        assert (work / "notes" / "todo.txt").read_text() == "call Bob"
        assert sorted(prepared.files) == ["README.md", "notes/todo.txt"]
        index = prepared.documents
        assert index is not None and [d.doc_id for d in index.documents] == ["policy.md", "faq.txt"]
        assert query_documents(index, "paid leave days").hits[0].chunk.doc_id == "policy.md"
        assert query_documents(index, "parking cost").hits[0].chunk.doc_id == "faq.txt"
        store = prepared.memory_path
        assert store is not None and store.is_file() and not store.is_relative_to(work)
        assert len(prepared.memory_ids) == 1
        options = prepared.reference_options()
        assert options == {"documents": index, "memory": store, "memory_embedder": emb}
        access = open_memory(store, emb)  # the fact is there, as the agent's recall_memory would find it
        try:
            found = access.recall("who is my manager", 3).text
        finally:
            access.close()
        assert "Priya Raman" in found
    finally:
        prepared.close()
    assert not store.exists()


def test_no_documents_no_memory_gives_no_index_no_store(tmp_path: Path) -> None:
    scenario = _scenario({}, category="tool_choice")
    prepared = prepare(scenario, tmp_path / "w", tmp_path, HashEmbedder())
    assert (prepared.documents, prepared.memory_path, prepared.reference_options()) == (None, None, {})


def test_memory_is_made_for_sessions_and_memory_tools() -> None:
    assert not needs_memory(_scenario({}))
    assert needs_memory(_scenario({}, expected_tools=["kind:memory"]))
    assert needs_memory(_scenario({}, forbidden_tools=["forget"]))
    two = [
        {"objective": "a", "success_criteria": "c"},
        {"objective": "b", "success_criteria": "c", "new_session": True},
    ]
    assert needs_memory(_scenario({}, turns=two))


def test_a_missing_document_names_the_scenario_file_and_document(tmp_path: Path) -> None:
    scenario = _scenario({"documents": [{"name": "gone.pdf", "__line__": 7}]})
    with pytest.raises(
        ConfigError, match=r"eval/scenarios/memory/s1.yaml:7: .*document 'gone.pdf' not found"
    ):
        prepare(scenario, tmp_path / "w", _docs(tmp_path), HashEmbedder())


@pytest.mark.parametrize("rel", ["../escape.txt", "/etc/passwd", "a/../../b"])
def test_a_setup_file_outside_the_workdir_is_refused(tmp_path: Path, rel: str) -> None:
    scenario = _scenario({"files": {rel: "x"}, "__line__": 3})
    with pytest.raises(ConfigError, match=r"s1.yaml:3: .*must stay inside the workdir"):
        prepare(scenario, tmp_path / "w", tmp_path, HashEmbedder())
    assert not (tmp_path / "escape.txt").exists()


def test_a_document_name_leaving_the_documents_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("x")
    scenario = _scenario({"documents": [{"name": "../secret.md"}]})
    with pytest.raises(ConfigError, match="must be a file name under"):
        prepare(scenario, tmp_path / "w", _docs(tmp_path), HashEmbedder())


def test_an_unindexable_document_is_a_config_error(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    (docs / "data.bin").write_bytes(b"\x00\x01")
    scenario = _scenario({"documents": [{"name": "data.bin"}]})
    with pytest.raises(ConfigError, match=r"document 'data\.bin' cannot be indexed"):
        prepare(scenario, tmp_path / "w", docs, HashEmbedder())


def test_a_fact_the_store_refuses_is_a_config_error_with_the_reason(tmp_path: Path) -> None:
    scenario = _scenario({"memory": ["The office wifi is slow."], "__line__": 4})
    with pytest.raises(ConfigError, match=r"s1.yaml:4: .*refused by the memory store: not a first-person"):
        prepare(scenario, tmp_path / "w", tmp_path, HashEmbedder(), memory_root=tmp_path / "m")
    assert list((tmp_path / "m").iterdir()) == []  # the private folder went with it
