"""Fixtures of the eval tasks integration tests (helpers in tasks_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tasks_fixtures import write_tasks_dir


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    return write_tasks_dir(tmp_path)
