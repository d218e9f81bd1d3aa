"""Unfenced agents' own PID namespace, and the note a run records where the machine gives none."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from assay.agents import _pidns
from assay.agents.fence import unfenced_note


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    _pidns._probe.cache_clear()
    yield
    _pidns._probe.cache_clear()


def test_where_no_namespace_can_be_made_the_command_runs_as_is_and_the_reason_is_said(
    fresh_probe: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    false = shutil.which("false")
    assert false is not None
    monkeypatch.setattr(_pidns, "_candidates", lambda: [[false]])  # a wrapper that cannot run anything
    assert _pidns.own_pids(["agent", "--go"]) == ["agent", "--go"]
    note = unfenced_note(False)
    assert note is not None and note.startswith("no PID namespace for unfenced agents (") and "false" in note
    assert unfenced_note(True) is None  # fenced: bubblewrap hides everything anyway
    monkeypatch.setattr(_pidns, "_candidates", lambda: [])
    _pidns._probe.cache_clear()
    assert "neither bwrap nor unshare is installed" in (_pidns.pid_isolation() or "")


def test_a_wrapper_that_shows_the_host_processes_is_not_taken(
    fresh_probe: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = shutil.which("env")
    assert env is not None
    monkeypatch.setattr(_pidns, "_candidates", lambda: [[env]])  # runs the command, in this PID namespace
    assert _pidns.own_pids(["agent"]) == ["agent"]
    assert "ran, but the command saw" in (_pidns.pid_isolation() or "")
