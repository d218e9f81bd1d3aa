from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.memory import default_scenario_dir, describe_scenarios
from assay.evals.memory._longmemeval import load_longmemeval
from assay.evals.memory._scenario import load_scenario, load_scenarios

GOOD = """\
id: tiny
theme: a tiny scenario
chats:
  - id: c01
    at: 2026-01-01T10:00:00Z
    turns:
      - user: "I live in Oslo."
        extract:
          facts:
            - {content: "User lives in Oslo", attribute: city, evidence: "I live in Oslo."}
probes:
  - {id: city, after: c01, kind: shown_recall, query: "where do I live", expect: [Oslo]}
"""


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_shipped_scenarios_load_and_cover_every_theme() -> None:
    scenarios = load_scenarios(default_scenario_dir())
    assert len(scenarios) == 6
    kinds = {p.kind for s in scenarios for p in s.probes}
    assert kinds == {"shown_recall", "shown_clean", "store_accuracy", "answer"}
    tags = {t for s in scenarios for p in s.probes for t in p.tags}
    assert {"planted", "forget", "secret", "third-party", "tool-output"} <= tags
    listing = describe_scenarios(default_scenario_dir())
    assert "work-documents/forgot-manager" in listing and "[full only]" in listing


def test_good_scenario_loads_with_its_script(tmp_path: Path) -> None:
    s = load_scenario(_write(tmp_path, GOOD))
    assert s.id == "tiny" and s.probes[0].after == "c01"
    (reply,) = s.scripted_replies()["replies"]
    assert reply["match"] == "task: extract; conversation: c01; turn: 0."
    assert json.loads(reply["text"])["facts"][0]["content"] == "User lives in Oslo"


@pytest.mark.parametrize(
    ("broken", "line", "words"),
    [
        (GOOD.replace("kind: shown_recall", "kind: shown_everything"), 12, "kind"),
        (GOOD.replace("after: c01", "after: c99"), 12, "c99"),
        (GOOD.replace("      - user:", "      - usr:"), 7, "user"),
        (GOOD.replace('evidence: "I live in Oslo."}', 'evidence: "I live in Oslo."'), None, "YAML"),
        (GOOD.replace("attribute: city,", "attribute: city, confidence: 7,"), 10, "confidence"),
        (GOOD + "  - {id: city, after: c01, kind: shown_clean, query: x, forbid: [y]}\n", 13, "duplicate"),
    ],
)
def test_malformed_scenario_names_file_and_line(
    tmp_path: Path, broken: str, line: int | None, words: str
) -> None:
    path = _write(tmp_path, broken)
    with pytest.raises(ConfigError) as err:
        load_scenario(path)
    assert str(path) in str(err.value)
    assert words in str(err.value)
    if line is not None:
        assert err.value.line == line, str(err.value)
    else:
        assert err.value.line is not None


def test_chats_must_move_forward_in_time(tmp_path: Path) -> None:
    text = GOOD.replace(
        "probes:",
        '  - id: c02\n    at: 2025-12-01T10:00:00Z\n    turns:\n      - user: "hi"\nprobes:',
    )
    with pytest.raises(ConfigError, match="not after chat") as err:
        load_scenario(_write(tmp_path, text))
    assert err.value.line == 11


def test_longmemeval_file_errors_name_the_record(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    path.write_text(
        json.dumps([{"question_id": "q1", "question": "?", "answer": "x", "haystack_sessions": []}])
    )
    with pytest.raises(ConfigError, match="record 0 lacks question_type"):
        load_longmemeval(path)
    path.write_text("[{")
    with pytest.raises(ConfigError, match="invalid JSON") as err:
        load_longmemeval(path)
    assert err.value.path == str(path)


def test_longmemeval_dates_and_sessions_are_read(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    record = {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "Where did I go?",
        "answer": "Lisbon",
        "question_date": "2023/05/30 (Tue) 10:00",
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/01 (Mon) 09:00"],
        "haystack_session_ids": ["b", "a"],
        "haystack_sessions": [
            [{"role": "user", "content": "I went to Lisbon"}],
            [{"role": "user", "content": "hi"}],
        ],
    }
    path.write_text(json.dumps([record]))
    (q,) = load_longmemeval(path)
    assert [s[0] for s in q.sessions] == ["a", "b"]  # sorted by date
    assert q.question_date.isoformat() == "2023-05-30T10:00:00+00:00"
