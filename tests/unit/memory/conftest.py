from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from assay.embed import HashEmbedder
from assay.memory import ManualClock, Memory, init_memory
from assay.memory.extract import task_marker
from assay.models.scripted import ScriptedModel

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def scripted(answers: dict[tuple[str, str, int | None], dict[str, Any]]) -> ScriptedModel:
    """A scripted extraction model: (task, conversation, turn) -> JSON answer."""
    replies = [
        {"match": task_marker(task, conv, turn), "text": json.dumps(answer)}
        for (task, conv, turn), answer in answers.items()
    ]
    return ScriptedModel({"replies": replies, "default": {"text": "{}"}})


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def memory(db_path: Path, clock: ManualClock) -> Iterator[Memory]:
    mem = init_memory(db_path, embedder=HashEmbedder(), clock=clock)
    yield mem
    mem.store.close()


@pytest.fixture
def make_model() -> Any:
    return scripted
