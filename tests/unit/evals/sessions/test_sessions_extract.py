"""Picky extraction on Claude Code session files recorded for real (tests/fixtures/sessions, see its
record_sessions.py): the requests kept and dropped are the ones a person would keep; then each rule on
records written in the same format (hooks, notifications, images, rewound branches, sidechains)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.sessions._dataset import build_dataset, explain, find_sources
from assay.evals.sessions._extract import extract
from assay.evals.sessions._records import read_session_file

PROJECTS = Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "sessions" / "claude" / "projects"


def _by_first_prompt() -> dict[str, object]:
    out = {}
    for path in find_sources(PROJECTS, None):
        found = extract(read_session_file(path))
        key = "subagent" if found.session.subagent else found.session.entries[0].text.split()[0]
        out[key] = found
    return out


def test_the_recorded_sessions_keep_exactly_what_a_person_would() -> None:
    found = _by_first_prompt()
    assert set(found) == {"What", "Find", "Rewrite", "subagent"}
    questions, tools, interrupted = found["What"], found["Find"], found["Rewrite"]
    # the embedded model's session: a question, its follow-up (with the question as context), "thanks" dropped
    assert [k.prompt[:24] for k in questions.kept] == ["What does parse_port in ", "Do the same for parse_ho"]
    follow = questions.kept[1]
    assert follow.follow_up and follow.context == [(questions.kept[0].prompt, questions.kept[0].reference)]
    assert [(d.index, d.reason) for d in questions.dropped] == [(3, "bare acknowledgement")]
    # tool use (Grep, Read) and a subagent are kept, with the tools the reference used; the pasted log is not
    assert [(k.index, k.tools) for k in tools.kept] == [(1, ["Grep", "Read"]), (2, ["Agent"])]
    assert tools.kept[0].reference.startswith("The retry limit is MAX_RETRIES = 5")
    assert [d.reason.split(" (")[0] for d in tools.dropped] == ["pasted dump"]
    # the subagent's own file is its side of the Agent call
    assert found["subagent"].kept == [] and "subagent" in found["subagent"].dropped[0].reason
    # an interrupted request, the /compact echo, its caveat and output, and the compaction summary are not
    # requests; the questions around them are, and the one after the compaction is a follow-up
    assert [k.prompt for k in interrupted.kept] == [
        "Never mind that. What is the default port in server.py?",
        "What does parse_host return for ' example.com '?",
        "And which function reads it?",
    ]
    assert interrupted.kept[2].context[-1][0] == "What does parse_host return for ' example.com '?"
    reasons = sorted(d.reason.split(" (")[0] for d in interrupted.dropped)
    assert reasons == [
        "compaction summary", "interrupted by the user", "meta message", "slash-command echo",
        "slash-command output",
    ]  # fmt: skip


def test_explain_names_every_transcript_with_what_it_kept_and_dropped() -> None:
    dataset, extractions = build_dataset(find_sources(PROJECTS, None))
    text = explain(extractions)
    assert len(dataset.cases) == 7 and text.count("claude-code, session") == 4
    assert "dropped #3 bare acknowledgement: 'thanks'" in text
    assert "dropped #1 interrupted by the user (its answer is unfinished)" in text
    assert "bookkeeping (queue-operation)" in text
    assert all(c.kept_because.startswith("a request answered in text") for c in dataset.cases)


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _rec(uuid: str, parent: str | None, kind: str, content: object, **extra: object) -> dict:
    return {"uuid": uuid, "parentUuid": parent, "type": kind, "sessionId": "s-1", "cwd": "/w",
            "message": {"role": kind, "content": content}, **extra}  # fmt: skip


def _answer(uuid: str, parent: str, text: str) -> dict:
    return _rec(
        uuid, parent, "assistant", [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": text}]
    )


def test_each_drop_rule_on_records_in_claude_codes_format(tmp_path: Path) -> None:
    image = [{"type": "text", "text": "What is wrong in this screenshot?"},
             {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]  # fmt: skip
    records = [
        {"type": "file-history-snapshot", "messageId": "m"},
        _rec("u1", None, "user", "Explain what server.py does."),
        _answer("a1", "u1", "It parses the port and host."),
        _rec("u2", "a1", "user", "<task-notification>background job done</task-notification>"),
        _rec("u3", "u2", "user", "Stop hook feedback: lint failed"),
        _rec("u4", "u3", "user", image),
        _answer("a4", "u4", "The button is cut off."),
        _rec("x1", "a4", "user", "Delete the tests."),  # rewound: the user edited this message
        _answer("x2", "x1", "Deleted."),
        _rec("u5", "a4", "user", "Add a docstring to parse_host."),
        _rec("s1", "u5", "user", "side work", isSidechain=True),
        _answer("a5", "s1", "Added it."),
        _answer("a5", "s1", "Added it."),  # Claude Code writes some records twice
        {"type": "progress", "uuid": "p1", "parentUuid": "a5", "data": {}},
    ]
    found = extract(read_session_file(_write(tmp_path / "s.jsonl", records)))
    assert [k.prompt for k in found.kept] == [
        "Explain what server.py does.",
        "Add a docstring to parse_host.",
    ]
    assert [d.reason.split(" (")[0] for d in found.dropped] == [
        "task notification", "hook feedback", "image attachment", "sidechain record",
    ]  # fmt: skip
    assert found.session.skipped["off the final chain (a rewound or edited branch)"] == 2
    assert found.session.skipped["the same record written twice"] == 1
    assert found.kept[1].reference == "Added it."  # the thinking block is not the answer


def test_a_follow_up_of_a_dropped_exchange_is_dropped_and_an_ack_does_not_break_a_follow_up(
    tmp_path: Path,
) -> None:
    records = [
        _rec("u1", None, "user", "Rename fetch to get."),
        _rec("i1", "u1", "user", [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
        _rec("u2", "i1", "user", "Do the same for the other one."),
        _answer("a2", "u2", "Renamed."),
        _rec("u3", "a2", "user", "Where is parse_port defined?"),
        _answer("a3", "u3", "In server.py."),
        _rec("u4", "a3", "user", "ok thanks"),
        _answer("a4", "u4", "You're welcome."),
        _rec("u5", "a4", "user", "And what about parse_host?"),
        _answer("a5", "u5", "Also in server.py."),
    ]
    found = extract(read_session_file(_write(tmp_path / "s.jsonl", records)))
    assert [d.reason.split(" (")[0] for d in found.dropped] == [
        "interrupted by the user", "a follow-up of nothing kept", "bare acknowledgement",
    ]  # fmt: skip
    assert [k.prompt for k in found.kept] == ["Where is parse_port defined?", "And what about parse_host?"]
    assert found.kept[1].context == [("Where is parse_port defined?", "In server.py.")]


def test_a_codex_cli_rollout(tmp_path: Path) -> None:
    def item(payload: dict) -> dict:
        return {"timestamp": "2026-11-30T10:00:00Z", "type": "response_item", "payload": payload}

    records = [
        {"timestamp": "2026-11-30T10:00:00Z", "type": "session_meta", "payload": {
            "id": "0199-codex", "cwd": "/w/app", "git": {"commit_hash": "abc123", "branch": "main"}}},
        item({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>cwd /w/app</environment_context>"}]}),
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List the modules."}]}),
        item({"type": "reasoning", "summary": []}),
        item({"type": "function_call", "name": "shell", "arguments": "{\"command\": [\"ls\"]}", "call_id": "c1"}),
        item({"type": "function_call_output", "call_id": "c1", "output": "a.py b.py"}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a and b."}]}),
        {"timestamp": "2026-11-30T10:01:00Z", "type": "event_msg", "payload": {"type": "token_count"}},
    ]  # fmt: skip
    session = read_session_file(_write(tmp_path / "rollout-1.jsonl", records))
    assert (session.format, session.cwd, session.commit, session.branch) == (
        "codex",
        "/w/app",
        "abc123",
        "main",
    )
    found = extract(session)
    assert [(k.prompt, k.reference, k.tools) for k in found.kept] == [
        ("List the modules.", "a and b.", ["shell"])
    ]
    assert found.dropped[0].reason == "environment context (injected by the client)"


def test_unreadable_sources_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "uuid": "u"}\n{not json\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:2: malformed JSON"):
        read_session_file(bad)
    with pytest.raises(ConfigError, match=r"--project nowhere: no .* \(known: none\)"):
        find_sources(None, "nowhere", home=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no session files"):
        find_sources(tmp_path / "empty", None)


def test_a_recorded_codex_cli_rollout_gives_its_request_and_its_commit() -> None:
    rollout = PROJECTS.parents[1] / "codex" / "sessions" / "rollout.jsonl"
    dataset, extractions = build_dataset(find_sources(rollout, None))
    (case,) = dataset.cases
    assert case.prompt == "Which port does the server listen on by default?"
    assert case.reference.startswith("The server listens on DEFAULT_PORT, 8080") and case.tools == [
        "exec_command"
    ]
    # the commit Codex recorded is the acme-app repository's first commit (rebuilt byte for byte)
    assert (case.commit, case.branch, case.cwd) == (
        "f14d0d99fe8d9e0ca944f07e728e5cbb2234921d", "main", "/home/dev/src/acme-app",
    )  # fmt: skip
    assert [d.reason for d in extractions[0].dropped] == ["environment context (injected by the client)"]
