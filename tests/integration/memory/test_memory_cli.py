from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from assay.cli._memory import memory_group
from assay.embed import HashEmbedder
from assay.memory import ManualClock, init_memory


async def _db(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    mem = init_memory(path, embedder=HashEmbedder(), clock=ManualClock())
    chat, _ = await mem.start_chat("c1")
    await mem.process_query(
        chat,
        "I live in Oslo. My manager is Ingrid Berg.",
        memory_tools=[
            ("remember", {"content": "User lives in Oslo", "attribute": "city", "evidence": "I live in Oslo."}),
            ("remember", {"content": "User's manager is Ingrid Berg", "entity": "manager", "attribute": "name",
                          "evidence": "My manager is Ingrid Berg."}),
        ],
    )  # fmt: skip
    mem.store.close()
    return path


async def test_show_search_forget(tmp_path: Path) -> None:
    db = await _db(tmp_path)
    runner = CliRunner()
    out = runner.invoke(memory_group, ["show", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "User lives in Oslo" in out.output and "Ingrid Berg" in out.output
    out = runner.invoke(memory_group, ["search", "where do I live", "--db", str(db)])
    assert out.exit_code == 0 and "User lives in Oslo" in out.output.splitlines()[0]
    out = runner.invoke(memory_group, ["forget", "--entity", "manager", "--db", str(db)], input="y\n")
    assert out.exit_code == 1 and "use --yes when not interactive" in str(out.exception)  # no terminal
    out = runner.invoke(memory_group, ["forget", "--entity", "manager", "--yes", "--db", str(db)])
    assert out.exit_code == 0 and "forgot 1 item" in out.output
    out = runner.invoke(memory_group, ["show", "--db", str(db), "--history", "--json"])
    assert "Ingrid" not in out.output and "Berg" not in out.output
    assert '"tombstones": ' in out.output


def test_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    out = CliRunner().invoke(memory_group, ["show", "--db", str(tmp_path / "nope.db")])
    assert out.exit_code != 0
    assert "nope.db" in str(out.exception or out.output)
