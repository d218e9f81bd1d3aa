"""The reference agent's memory tools (``memory=PATH``): a fact remembered in one turn is recalled in a later
one, from a later harness on the same store file; the tools are offered only with a store; bad paths and
refused facts are clear."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.agents import AgentResult, RunSpec
from assay.agents.reference import ReferenceHarness
from assay.agents.reference.memory import MEMORY_TOOLS
from assay.embed import HashEmbedder
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel

FACT = "My favourite colour is teal."


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _record(result: AgentResult) -> list[dict[str, Any]]:
    rows = []
    for call in result.tool_record:
        row = call.model_dump()
        assert row.pop("started_s") <= row.pop("ended_s")
        rows.append(row)
    return rows


def _row(name: str, arguments: dict[str, Any], summary: str, status: str = "ok") -> dict[str, Any]:
    return {
        "name": name,
        "kind": "memory",
        "arguments": arguments,
        "result_summary": summary,
        "status": status,
        "edited_paths": [],
        "command": None,
        "exit_code": None,
        "test_counts": None,
    }


async def test_a_fact_remembered_in_one_turn_is_recalled_in_a_later_one(tmp_path: Path) -> None:
    store = tmp_path / "mem" / "agent.db"
    work = tmp_path / "work"
    work.mkdir()
    first = ReferenceHarness(
        model=ScriptedModel(
            [_call("remember", content=FACT, attribute="favourite colour"), {"text": "Noted."}]
        ),
        memory=store,
        memory_embedder=HashEmbedder(),
    )
    one = await first.run(f"{FACT} Please remember that.", RunSpec(workdir=work))
    await first.close()
    assert one.answer == "Noted." and store.is_file()
    assert _record(one) == [
        _row(
            "remember",
            {"content": FACT, "attribute": "favourite colour"},
            '{"id": 1, "ok": true, "tool": "remember"}',
        )
    ]

    # a later harness on the same file: a fresh conversation, the memory is all that carries over
    model = ScriptedModel([_call("recall_memory", query="favourite colour", k=3), {"text": "Teal."}])
    later = ReferenceHarness(model=model, memory=str(store), memory_embedder=HashEmbedder())
    two = await later.run("What is my favourite colour?", RunSpec(workdir=work))
    await later.close()
    assert two.answer == "Teal."
    assert _record(two) == [_row("recall_memory", {"query": "favourite colour", "k": 3}, f"[1] {FACT}")]
    assert next(e.content for e in two.transcript if e.role == "tool") == f"[1] {FACT}"
    offered = {t.name for t in model.calls[0]["tools"]}
    assert set(MEMORY_TOOLS) <= offered and "read_file" in offered


async def test_forget_and_bad_calls_are_recorded_as_the_calls_results(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    harness = ReferenceHarness(
        model=ScriptedModel(
            [
                _call("remember", content=FACT),
                _call("forget", target=FACT),
                _call("recall_memory", query="favourite colour"),
                _call("set_reminder", content="call the dentist", due="not a date"),
                _call("complete_reminder", match="water the plants"),
                {"text": "done"},
            ]
        ),
        memory=tmp_path / "m.db",
        memory_embedder=HashEmbedder(),
    )
    result = await harness.run(
        f"{FACT} Forget it again. Remind me to call the dentist.", RunSpec(workdir=work)
    )
    await harness.close()
    assert [(c.name, c.status, c.result_summary) for c in result.tool_record] == [
        ("remember", "ok", '{"id": 1, "ok": true, "tool": "remember"}'),
        ("forget", "ok", '{"forgotten_items": 1, "ok": true, "scrubbed": 0, "tool": "forget"}'),
        ("recall_memory", "ok", "nothing remembered matches"),
        (
            "set_reminder",
            "error",
            '{"error": "bad arguments: not an ISO date: \'not a date\'", "ok": false, "tool": "set_reminder"}',
        ),
        (
            "complete_reminder",
            "error",
            '{"error": "no open reminder matches", "ok": false, "tool": "complete_reminder"}',
        ),
    ]


def test_memory_tools_are_offered_only_with_a_store(tmp_path: Path) -> None:
    plain = ReferenceHarness(model="scripted/x.yaml")
    assert not {t.name for t in plain.tools} & set(MEMORY_TOOLS)
    with pytest.raises(ConfigError, match="the remember tool needs memory="):
        ReferenceHarness(tools=["read_file", "remember"])
    chosen = ReferenceHarness(tools=["remember"], memory=tmp_path / "m.db", memory_embedder=HashEmbedder())
    assert [t.name for t in chosen.tools] == ["remember"]


def test_an_unusable_memory_path_is_a_config_error_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="memory= is a folder") as folder:
        ReferenceHarness(memory=tmp_path, memory_embedder=HashEmbedder())
    assert folder.value.path == str(tmp_path)
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not a SQLite database, not even close" * 100)
    with pytest.raises(ConfigError, match="memory= cannot be opened"):
        ReferenceHarness(memory=broken, memory_embedder=HashEmbedder())
    blocked = tmp_path / "file"
    blocked.write_text("x")
    with pytest.raises(ConfigError, match="memory= cannot be opened"):
        ReferenceHarness(memory=blocked / "sub" / "m.db", memory_embedder=HashEmbedder())
    with pytest.raises(ConfigError, match="memory= should be a file path"):
        ReferenceHarness(memory=3, memory_embedder=HashEmbedder())  # type: ignore[arg-type]
