"""The aider chat-history parser on a real recorded run (tests/fixtures/agents/record_aider.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from assay.agents.transcripts import TranscriptInput, parse_aider_history

FIXTURE = Path(__file__).parents[2] / "fixtures" / "agents" / "aider_history.md"


def _parse(out: Path):
    inp = TranscriptInput(
        stdout=[], stderr="", workdir=Path("/WORKDIR"), output_dir=out, exit_code=0, started_at=0
    )
    return parse_aider_history(inp)


def test_recorded_run(tmp_path: Path) -> None:
    shutil.copy(FIXTURE, tmp_path / "history.md")
    p = _parse(tmp_path)
    assert [(c.name, c.kind, c.edited_paths, c.status) for c in p.tool_record] == [
        ("edit", "edit", ["hello.py"], "ok")
    ]
    assert p.answer == 'I will create hello.py.\n\nhello.py\n```python\nprint("hi")\n```'
    assert [e.role for e in p.transcript] == ["user", "assistant"]
    assert p.transcript[0].content == "create hello.py printing hi"
    assert p.steps == 1 and p.error is None
    assert p.usage.calls == 0  # aider prints rounded counts only: the gateway counts its tokens


def test_commands_and_their_failures(tmp_path: Path) -> None:
    (tmp_path / "history.md").write_text(
        "# aider chat started at 2026-01-01 00:00:00\n\n> banner  \n\n#### run the tests  \n\n"
        "Run them:\n```bash\npytest -q\n```\n\n> Running pytest -q  \n> Command exited with code 1  \n"
        "\n#### thanks  \n\nYou're welcome.\n"
    )
    p = _parse(tmp_path)
    assert [(c.kind, c.command, c.status) for c in p.tool_record] == [("shell", "pytest -q", "error")]
    assert p.answer == "You're welcome." and p.steps == 2


def test_missing_history_is_an_error(tmp_path: Path) -> None:
    assert _parse(tmp_path).error == "aider wrote no chat history at history.md"
